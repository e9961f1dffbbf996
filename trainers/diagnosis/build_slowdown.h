// build_slowdown.h — a slowdown compiled into the trainers on purpose, for measuring how well
// `dpscale ab` and `dpscale bisect` catch a real change between two builds (docs/ab.md,
// "How well it catches a change"). Set by CMake's DPSCALE_BUILD_SLOWDOWN ("" in every normal
// build): "dp:PCT" slows the data-parallel trainers' steps by PCT percent, "all:PCT" every
// trainer's, the single one's included. The extra time is CPU spent spinning at the end of every
// timed step, PCT of that step's own time, on every rank, so it behaves as slower code would.
#pragma once

#include <string>

namespace dpscale {

struct BuildSlowdown {
  bool data_parallel_only = true;
  double pct = 0.0;  // 0: none
};

// The compiled-in setting; throws InputError on a malformed value (a build misconfigured).
BuildSlowdown build_slowdown();
// Parsed from "dp:PCT" / "all:PCT" / "" (exposed for its test).
BuildSlowdown parse_build_slowdown(const std::string& text);

}  // namespace dpscale
