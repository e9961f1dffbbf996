// nonfinite_hook.h — a test-only hook that puts one real NaN or infinity into the step's
// all-reduced gradient or into a weight, just before the update, so the tests can see at which
// step and with which line each backend's finite check stops a run. Inert unless set:
//
//   DPSCALE_TEST_INJECT_NONFINITE=gradient|weight:nan|inf|-inf:STEP
//
// STEP counts the timed optimizer steps from 1 (warm-up has no update and does not count). The
// value lands in layers.1.weight, element 5 ([0, 5]), on every rank alike (after the all-reduce,
// so every rank's check sees it), through Device::upload: on a GPU the compute stream's order.
// A malformed value is refused (std::invalid_argument), so a typo cannot pass for "no hook".
#pragma once

#include <cstdint>
#include <string>

#include "models/model.h"

namespace dpscale {

struct NonfiniteInjection {
  enum class Into { none, gradient, weight };
  Into into = Into::none;
  float value = 0.0f;
  int64_t step = 0;         // the timed update it lands before (1-based)
  int64_t updates_seen = 0;

  // From DPSCALE_TEST_INJECT_NONFINITE; `model` must have a layers.1.weight with 6 elements.
  static NonfiniteInjection from_env(const MlpSpec& model);
  // Called before every update: at the STEP-th, writes the value.
  void before_update(Model& m);
};

}  // namespace dpscale
