// mpi_communicator.h — the MPI Communicator for the CPU backend.
//
// A dedicated comm thread per rank runs queued all-reduces in FIFO order: the CPU analogue of
// a CUDA stream, which is what lets the interleaved and bucketed trainers overlap communication
// with the backward pass on a CPU. It works on its own duplicate of the world communicator, so
// collectives the main thread makes (barriers, result gathering) never interleave with it.
// With link emulation the thread performs the real all-reduce, then holds until the α-β model
// time of that message has passed since it started.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "allreduce_algos.h"
#include "communicator.h"
#include "contract/link_model.h"
#include "watchdog.h"

namespace dpscale {

class MpiCommunicator final : public Communicator {
 public:
  // `watchdog` (may be null: no deadline) bounds each all-reduce's wait (watchdog.h).
  MpiCommunicator(MPI_Comm world, AllreduceAlgo algo, LinkModel link, CollectiveWatchdog* watchdog = nullptr);
  ~MpiCommunicator() override;

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  std::unique_ptr<Work> allreduce_sum(float* data, size_t count) override;
  std::unique_ptr<Work> reduce_scatter_sum(float* data, size_t count) override;
  std::unique_ptr<Work> allgather(float* data, size_t count) override;
  void finish() override;
  double take_busy_seconds() override;
  double take_allgather_seconds() override;
  void log_calls(bool on) override;
  std::vector<CallTiming> take_call_log() override;
  void set_grad_format(GradFormat fmt, const float* exact) override {
    fmt_ = fmt;
    exact_ = exact;
  }

  // May change between steps (a delay that is a share of the step): the comm thread reads it.
  void slow_link(double extra_s_per_step, size_t floats_per_step) override {
    slow_floats_ = floats_per_step;
    slow_extra_s_ = extra_s_per_step;
  }

  const LinkModel& link() const { return link_; }
  AllreduceAlgo algo() const { return algo_; }

 private:
  struct Task {
    float* data;
    size_t count;
    uint64_t seq;
    double queued_s;  // steady-clock seconds at allreduce_sum(), for the diagnosis's timings
    Collective op;
  };
  std::unique_ptr<Work> enqueue(float* data, size_t count, Collective op);
  class MpiWork;
  void run();
  // The all-reduce of one task in the wire format; returns the bytes it sent per rank's buffer.
  size_t reduce(float* data, size_t count);
  // A reduce-scatter or all-gather of one task; returns the bytes of the whole buffer in its
  // wire format (what the link model's (K-1)/K is taken of).
  size_t shard_collective(const Task& task);
  void wait_for(uint64_t seq);
  bool is_done(uint64_t seq);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  AllreduceAlgo algo_;
  LinkModel link_;
  NodeShape shape_;  // the nodes the link model sees (two tiers, hier)
  CollectiveWatchdog* watchdog_;
  GradFormat fmt_ = GradFormat::fp32;
  const float* exact_ = nullptr;  // summed in fp32 whatever fmt_ (the loss slot)
  std::atomic<double> slow_extra_s_{0.0};  // slow_link()
  std::atomic<size_t> slow_floats_{0};

  std::mutex mu_;
  std::condition_variable queued_cv_, done_cv_;
  std::deque<Task> queue_;
  uint64_t launched_ = 0, completed_ = 0;
  double busy_s_ = 0.0;
  double allgather_s_ = 0.0;  // the all-gathers' part of busy_s_
  bool stop_ = false;
  bool log_calls_ = false;         // keep each call's CallTiming (log_calls)
  std::vector<CallTiming> call_log_;
  std::thread worker_;
};

}  // namespace dpscale
