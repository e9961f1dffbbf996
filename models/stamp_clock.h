// stamp_clock.h — points in time on a device's compute stream, read back later on the host's
// steady clock: the clock of --trace, so that a GPU's spans are the GPU's times, not the host's
// launch times.
//
//   anchor()      ties the device's clock to the host's; call where the stream has nothing
//                 queued (the host has just waited for it), so a mark recorded now runs now
//   stamp()       a mark at this point of the stream (queued, no host wait); returns its id
//   seconds(id)   that mark as steady_clock seconds since the clock's epoch (waits for it):
//                 the anchor's host time plus the device time from the anchor to the mark
//
// The CPU backend is synchronous: its stream's time is the host's, and a stamp is `now`. The
// CUDA backend records an event per stamp (models/cuda/cuda_stamp_clock.cu). Stamps are for
// the traced steps only (at most 64), so their number stays small.
#pragma once

#include <chrono>
#include <vector>

namespace dpscale {

class StampClock {
 public:
  virtual ~StampClock() = default;
  virtual void anchor() = 0;
  virtual int stamp() = 0;
  virtual double seconds(int id) = 0;
};

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class HostStampClock final : public StampClock {
 public:
  void anchor() override {}
  int stamp() override {
    times_.push_back(steady_seconds());
    return static_cast<int>(times_.size()) - 1;
  }
  double seconds(int id) override { return times_.at(static_cast<size_t>(id)); }

 private:
  std::vector<double> times_;
};

}  // namespace dpscale
