// interval_timer.h — time spent between two marks on a device's compute stream, summed over
// many intervals, with no host synchronisation inside an interval.
//
// The data-parallel trainers time the wait for communication at the end of every step. On a GPU
// a host clock would have to synchronise the stream at both marks, which would serialise the
// host's kernel launches with the GPU and change what is measured; the CUDA backend records an
// event pair on the compute stream instead and reads the elapsed times later. The CPU backend is
// synchronous, so the host clock is the stream's clock.
#pragma once

#include <chrono>

namespace dpscale {

class IntervalTimer {
 public:
  virtual ~IntervalTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Seconds summed over the intervals closed since the last take; waits for them to complete.
  virtual double take_seconds() = 0;
};

// The host clock (steady_clock): for synchronous devices.
class HostIntervalTimer final : public IntervalTimer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { sum_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  double take_seconds() override {
    const double s = sum_;
    sum_ = 0.0;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point t0_{};
  double sum_ = 0.0;
};

}  // namespace dpscale
