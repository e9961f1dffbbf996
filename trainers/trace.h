// trace.h — the timeline of --trace FILE --trace-steps A:B (issue 9): Chrome trace-event JSON
// (the format chrome://tracing and Perfetto load), one process per rank, merged by rank 0.
//
//   pid = rank, tid 0 "step"      each traced step, batch fetch to optimizer end
//               tid 1 "compute"   forward + loss (all layers: the model has no per-layer
//                                 forward hook); backward of each tensor (the span ends when
//                                 that tensor's gradient is ready; a layer's dX GEMM falls in
//                                 the next tensor's span); the wait in finish(); the optimizer
//               tid 2 "comm"      each all-reduce as the comm thread ran it, with its bytes,
//                                 the tensors it covers and when it was queued
//               tid 3 "loader"    waiting for the batch
// Times are µs of the host's steady clock since this rank's origin, taken as the ranks leave a
// barrier, so the ranks' timelines line up to within the barrier's exit skew. Only steps A..B
// are recorded (at most 64), so the file's size is bounded: a few kB per step and rank.
// The CPU backend's host clock is its compute clock; on a GPU the compute spans would be host
// launch times, so --trace is refused there (step_probe.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "contract/diagnosis_options.h"
#include "models/param_layout.h"

namespace dpscale {

enum class Track { step = 0, compute = 1, comm = 2, loader = 3 };

// The straggler a trace marks (Tracer::merge).
struct TraceStraggler {
  int rank = -1;  // -1: none
  std::string cause;
};

class Tracer {
 public:
  Tracer(TraceSteps steps, const ParamLayout& layout, const float* grads);

  void set_origin();                  // now is t = 0 (call as the ranks leave a barrier)
  void begin_step(int64_t step);      // records only the steps in A..B
  void mark(Track t);                 // a span on t starts now
  void span(Track t, const std::string& name, nlohmann::ordered_json args);  // ... and ends now
  void grad_ready(const FlatTensor& t);  // "backward <tensor>" since the last compute mark
  void end_step();
  void add_calls(const std::vector<CallTiming>& calls);  // this step's all-reduces

  // This rank's events as a JSON array (text).
  std::string events_text() const;
  // The whole file from every rank's events_text(), in rank order. With a straggler found
  // (trainers/straggler.h) its process is named so and its spans of the cause — backward
  // (compute), loader, its all-reduces (link) — carry args.straggler and Chrome's red.
  static std::string merge(const std::vector<std::string>& per_rank, const nlohmann::ordered_json& meta,
                           const TraceStraggler& straggler = TraceStraggler{});

 private:
  double now_us() const;
  double to_us(double steady_s) const;
  void push(Track t, const std::string& name, double ts_us, double dur_us, nlohmann::ordered_json args);

  TraceSteps steps_;
  const ParamLayout& layout_;
  const float* grads_;
  std::chrono::steady_clock::time_point origin_;
  bool on_ = false;
  int64_t step_ = 0;
  double marks_[4] = {0, 0, 0, 0};
  int call_index_ = 0;
  std::vector<nlohmann::ordered_json> events_;
};

}  // namespace dpscale
