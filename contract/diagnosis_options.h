// diagnosis_options.h — the values of the diagnosis options that are more than a
// number: --inject-delay RANK:MS and --trace-steps A:B. Parsed here, once, for the option table
// (contract/trainer_options.cpp), the trainers and the harness's config checks.
#pragma once

#include <cstdint>
#include <string>

namespace dpscale {

// Where an injected straggler loses its time: its backward compute, its loader, or its link.
enum class DelayCause { compute, loader, link };
const char* cause_name(DelayCause c);

// --inject-delay RANK:MS[:CAUSE]: that rank is MS milliseconds slower every timed step (MS may
// be a share of its step, "10%": that much of the running median of its own step times), in
//   compute (the default)  backward: MS spread over its gradients, before each is announced
//   loader                 its batch arrives MS late (counted as its loader wait)
//   link                   its emulated link: its all-reduces take MS longer per step, each
//                          its share of the step's floats (the comm thread holds after the call)
// "" (the default) is no delay.
struct InjectDelay {
  int rank = -1;  // -1: none
  double ms = 0.0;
  double pct = 0.0;  // "10%": ms is 0, the delay is pct/100 of the rank's step
  DelayCause cause = DelayCause::compute;
  bool enabled() const { return rank >= 0 && (ms > 0.0 || pct > 0.0); }
  bool on(int r, DelayCause c) const { return enabled() && rank == r && cause == c; }
};
// Throws ValueError: "must be RANK:MS[:compute|loader|link], e.g. 1:150 or 1:10%:link (got 'x')".
InjectDelay parse_inject_delay(const std::string& text);

// --trace-steps A:B: the timed steps (1-based, inclusive, counted over the whole run) a trace
// records. A ≥ 1, B ≥ A, at most 64 steps (a trace is bounded).
struct TraceSteps {
  int64_t first = 1, last = 2;
  bool contains(int64_t step) const { return step >= first && step <= last; }
};
inline constexpr int64_t kMaxTraceSteps = 64;
TraceSteps parse_trace_steps(const std::string& text);

}  // namespace dpscale
