// call_log_sampling.h — which timed steps keep the communicator's call log (each all-reduce's
// start and end, for the record's per-bucket bandwidth and the trace's comm spans).
//
// On the host backends the log is a clock read per call, and the emulated link's hold is read
// from it every step: every step keeps it. On a GPU each logged call needs an end event of its
// own on the comm stream, where naive's batch otherwise needs one for all its calls
// (nccl_communicator.cpp): one timed step in kCallLogEvery keeps it, the first always, so the
// per-bucket medians come from an eighth of the steps and the rest run without those events.
// A traced run keeps it every step: the trace draws every step's calls.
#pragma once

#include <cstdint>

namespace dpscale {

inline constexpr int64_t kCallLogEvery = 8;

// Whether every timed step keeps the log: a host backend (the device is host-visible), or a
// traced run.
inline bool call_log_every_step(bool host_backend, bool traced) { return host_backend || traced; }

// `timed_step`: 0 for the first timed step. `every_step`: call_log_every_step's answer.
inline bool call_log_on(int64_t timed_step, bool every_step) {
  return every_step || timed_step % kCallLogEvery == 0;
}

}  // namespace dpscale
