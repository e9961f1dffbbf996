// trace.h — the timeline of --trace FILE --trace-steps A:B: Chrome trace-event JSON
// (the format chrome://tracing and Perfetto load), one process per rank, merged by rank 0.
//
//   pid = rank, tid 0 "step"      each traced step, batch fetch to optimizer end
//               tid 1 "compute"   forward + loss (all layers: the model has no per-layer
//                                 forward hook); backward of each tensor (the span ends when
//                                 that tensor's gradient is ready; a layer's dX GEMM falls in
//                                 the next tensor's span); the wait in finish(); the optimizer
//               tid 2 "comm"      each all-reduce as the comm thread (MPI) or the comm stream
//                                 (NCCL: its start/end events) ran it, with its bytes, the
//                                 tensors it covers and when the host queued it
//               tid 3 "loader"    the host waiting for the batch
//               counters          "run delay (ms per step)" and "involuntary switches (per step)":
//                                 what the rank's threads lost to contention in each traced step
//                                 (contention.h), drawn from the step's start to its end
// Times are µs of the host's steady clock since this rank's origin, taken as the ranks leave a
// barrier, so the ranks' timelines line up to within the barrier's exit skew. The step and
// compute tracks are read from the device's StampClock (models/stamp_clock.h): the host clock on
// the CPU backend, CUDA events on the compute stream on a GPU — the GPU's own times, mapped onto
// the host clock through an anchor at each traced step's start, not the host's launch times.
// Marks are kept as stamps and read when the file is written, so tracing adds no host wait
// inside a step. Only steps A..B are recorded (at most 64): a few kB per step and rank.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "contract/diagnosis_options.h"
#include "models/param_layout.h"
#include "models/stamp_clock.h"

namespace dpscale {

enum class Track { step = 0, compute = 1, comm = 2, loader = 3 };

// The straggler a trace marks (Tracer::merge), or the rank the straggler rule found contended
// (its excess matched by its run delay: straggler.h), marked as such and not as a straggler.
struct TraceStraggler {
  int rank = -1;  // -1: none
  std::string cause;
  bool contended = false;
};

class Tracer {
 public:
  // `device_clock` (the device's make_stamp_clock()) marks the step and compute tracks.
  Tracer(TraceSteps steps, const ParamLayout& layout, const float* grads, std::unique_ptr<StampClock> device_clock);

  void set_origin();                  // now is t = 0 (call as the ranks leave a barrier)
  void begin_step(int64_t step);      // records only the steps in A..B
  void mark(Track t);                 // a span on t starts now
  void span(Track t, const std::string& name, nlohmann::ordered_json args);  // ... and ends now
  void grad_ready(const FlatTensor& t);  // "backward <tensor>" since the last compute mark
  void end_step();
  // This step's all-reduces, each with the bytes it sent (the wire format's: GradSync::wire_bytes).
  void add_calls(const std::vector<CallTiming>& calls, const std::vector<int64_t>& bytes);
  // What the rank's threads lost in this step (read at its end; the previous read began it).
  void contention(double run_delay_s, int64_t involuntary_switches);

  // This rank's events as a JSON array (text); reads the stamps (waits for the device).
  std::string events_text();
  // The whole file from every rank's events_text(), in rank order. With a straggler found
  // (trainers/diagnosis/straggler.h) its process is named so and its spans of the cause — backward
  // (compute), loader, its all-reduces (link) — carry args.straggler and Chrome's red; a
  // contended rank's process is named "contended, not a straggler" and those spans carry
  // args.contended, in Chrome's yellow.
  static std::string merge(const std::vector<std::string>& per_rank, const nlohmann::ordered_json& meta,
                           const TraceStraggler& straggler = TraceStraggler{});

 private:
  StampClock& clock_of(Track t);
  // A span whose ends are stamps of its track's clock, or (calls) steady-clock seconds.
  struct Span {
    Track track;
    std::string name;
    bool stamped;
    int start_id, end_id;
    double start_s, end_s;
    nlohmann::ordered_json args;
  };

  TraceSteps steps_;
  const ParamLayout& layout_;
  const float* grads_;
  std::unique_ptr<StampClock> device_;
  HostStampClock host_;  // the loader track: the host's own waiting
  double origin_s_ = 0.0;
  bool on_ = false;
  int64_t step_ = 0;
  int marks_[4] = {-1, -1, -1, -1};
  int call_index_ = 0;
  std::vector<Span> spans_;
  struct Counter {
    double t_s;
    double run_delay_s;
    int64_t switches;
  };
  std::vector<Counter> counters_;
  double last_read_s_ = 0.0;  // the previous contention read: this step's start
};

}  // namespace dpscale
