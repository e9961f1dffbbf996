// communicator.h — the collective interface the gradient-sync strategies talk to.
//
//   allreduce_sum(data, count) -> Work   asynchronous, in place, sum over all ranks; queued in
//                                        FIFO order after all compute queued so far
//   Work::wait()                         host blocks until that all-reduce is complete
//   Work::done()                         whether it is, without blocking
//   finish()                             compute queued after it runs after every queued
//                                        all-reduce: on the CPU the host waits; on a GPU the
//                                        compute stream does, and the host goes on
//   drain()                              host waits for every queued all-reduce, checking for
//                                        failures (NCCL: its async errors); once per step
//   reduce_scatter_sum(data, count)      the same queue, the sum's block r left on rank r
//   allgather(data, count)               the same queue, block r of rank r copied to all
//                                        (both: shard_collectives.h; the sharded trainer's)
// Blocking = launch + wait. MPI (CPU backend): a dedicated comm thread runs the queue — the
// CPU's analogue of a CUDA stream. NCCL (CUDA backend): a dedicated comm stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "contract/link_model.h"
#include "grad_format.h"
#include "models/device.h"

namespace dpscale {

// What a queued collective does. All share one queue and one sequence (the gradients channel
// of the watchdog), so they run in the order they were queued, as on a CUDA stream.
enum class Collective { allreduce, reduce_scatter, allgather };
// Inline: the NCCL communicator lives in a library of its own.
inline const char* collective_name(Collective c) {
  return c == Collective::reduce_scatter ? "reduce-scatter" : c == Collective::allgather ? "all-gather" : "all-reduce";
}

// One all-reduce's times on the steady clock (seconds), for per-bucket bandwidth and
// the trace: queued by the caller, started and finished on the comm thread.
struct CallTiming {
  const float* data = nullptr;  // where the reduced floats start (which tensors they are)
  size_t count = 0;             // floats
  double queued_s = 0.0, start_s = 0.0, end_s = 0.0;
  // Of end_s - start_s, the time past where the link model says the call ends (the later of
  // the real call's end and the modelled link time): what this rank's link took beyond the
  // link every rank shares. Not the whole hold: a rank that arrives late at a call holds
  // longest, so the hold would blame lateness on the link.
  double link_s = 0.0;
  Collective op = Collective::allreduce;
};

class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
  // Whether it has completed, without waiting (a strategy polls it to free what the call read).
  virtual bool done() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string name() const = 0;  // "mpi" | "nccl"
  virtual int rank() const = 0;
  virtual int world_size() const = 0;

  // `count` floats at `data` (the backend's device memory), summed in place across ranks.
  virtual std::unique_ptr<Work> allreduce_sum(float* data, size_t count) = 0;
  void allreduce_sum_blocking(float* data, size_t count) { allreduce_sum(data, count)->wait(); }
  // Several all-reduces queued at once, in order, with no compute queued between them (naive's
  // calls after backward), their Work not kept: the same as allreduce_sum on each. A backend
  // whose ordering after compute costs per call (NCCL: an event and a stream wait) orders the
  // whole batch once.
  struct Range {
    float* data;
    size_t count;
  };
  virtual void allreduce_sum_batch(const std::vector<Range>& calls) {
    for (const Range& c : calls) allreduce_sum(c.data, c.count);
  }
  // Reduce-scatter and all-gather of `count` floats, count a multiple of world_size(): block r
  // is [r·count/K, (r+1)·count/K) (comm/shard_collectives.h). The reduce-scatter sends the
  // gradients' wire format (set_grad_format; the range must not hold the exact element); the
  // all-gather always fp32 (it carries parameters). Queued after everything queued before.
  // The base class has none (std::logic_error).
  virtual std::unique_ptr<Work> reduce_scatter_sum(float* data, size_t count) {
    (void)data;
    (void)count;
    throw std::logic_error(name() + " communicator: no reduce-scatter");
  }
  virtual std::unique_ptr<Work> allgather(float* data, size_t count) {
    (void)data;
    (void)count;
    throw std::logic_error(name() + " communicator: no all-gather");
  }
  virtual void finish() = 0;
  virtual void drain() {}

  // The gradients' wire format (grad_format.h). With bf16/fp16 every later all-reduce
  // sends 2 bytes per element, except the element at `exact` (the loss slot), summed in fp32 in
  // a one-element all-reduce of its own: a loss read back in bf16 would be off by up to 0.4 %.
  // Call before the first all-reduce. The base class knows fp32 only (std::logic_error). How
  // each backend accumulates the 2-byte sums: grad_compress.h (MPI), nccl_communicator.cpp.
  virtual void set_grad_format(GradFormat fmt, const float* exact) {
    (void)exact;
    if (fmt != GradFormat::fp32) throw std::logic_error(name() + " communicator: no 2-byte gradients");
  }

  // Seconds the all-reduces launched since the last call spent running (their summed
  // durations, link-emulation hold included). Call after finish().
  virtual double take_busy_seconds() = 0;
  // Of those seconds, the all-gathers' (taken apart: the sharded trainer's allgather_s). Call
  // after finish(), before take_busy_seconds() (which resets it too).
  virtual double take_allgather_seconds() { return 0.0; }

  // Names the all-reduce of `count` floats at `data` for the collective watchdog's message
  // ("tensor layers.1.weight in step 12"). Called from the waiting thread, on a timeout only.
  using Namer = std::function<std::string(const float* data, size_t count)>;
  void set_namer(Namer namer) { namer_ = std::move(namer); }

 protected:
  // "all-reduce #seq of <namer's words> (N floats)": what a timed-out wait was for.
  // Inline: the NCCL communicator lives in a library of its own.
  std::string describe_allreduce(uint64_t seq, const float* data, size_t count,
                                Collective op = Collective::allreduce) const {
    std::string s = std::string(collective_name(op)) + " #" + std::to_string(seq) + " (" + std::to_string(count) + " floats)";
    if (namer_) s += " of " + namer_(data, count);
    return s;
  }
  Namer namer_;

 public:
  // When on, each all-reduce's CallTiming is kept until taken (after finish(); NCCL's after
  // drain(), when it reads its events). Switched only between steps, with nothing in flight.
  // NCCL times a batch's calls one by one only while it is on (allreduce_sum_batch).
  virtual void log_calls(bool) {}
  virtual std::vector<CallTiming> take_call_log() { return {}; }
  // --inject-delay RANK:MS:link on this rank: every all-reduce holds `extra_s_per_step` times
  // its share of `floats_per_step` longer, a slower link on this rank alone. MPI only (checked
  // before the job starts: contract/diagnosis_options.h).
  virtual void slow_link(double extra_s_per_step, size_t floats_per_step) {
    (void)extra_s_per_step;
    (void)floats_per_step;
    throw std::logic_error(name() + " communicator: no emulated link to slow down");
  }
};

// InputError when the link emulation or the algorithm cannot run on the communicator this
// backend gets (NCCL uses the real link and its own algorithms). Checked before any rank
// creates a communicator, so every rank refuses alike.
void check_comm_options(Backend backend, const LinkModel& link, AllreduceAlgo algo);

// InputError when the backend's communicator cannot send gradients in `fmt` (NCCL older than
// 2.10 has no bf16).
void check_grad_format(Backend backend, GradFormat fmt);

// "2.28.9", or "" when NCCL is not compiled in.
std::string nccl_version();

}  // namespace dpscale
