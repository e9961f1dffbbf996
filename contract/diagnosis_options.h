// diagnosis_options.h — the values of the diagnosis options (issue 9) that are more than a
// number: --inject-delay RANK:MS and --trace-steps A:B. Parsed here, once, for the option table
// (contract/trainer_options.cpp), the trainers and the harness's config checks.
#pragma once

#include <cstdint>
#include <string>

namespace dpscale {

// --inject-delay RANK:MS: that rank sleeps MS milliseconds every timed step, during backward,
// before its first gradient is announced. "" (the default) is no delay.
struct InjectDelay {
  int rank = -1;  // -1: none
  double ms = 0.0;
  bool enabled() const { return rank >= 0 && ms > 0.0; }
};
// Throws ValueError: "must be RANK:MS, e.g. 1:150 (got 'x')".
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
