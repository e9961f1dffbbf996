// ab_dilation.h — one link dilation for both builds of a `dpscale ab` session.
//
// A config's `link_dilation: "auto:TFLOPS"` makes every data-parallel run probe this machine's
// GEMM rate as it starts and stretch each modelled link time by TFLOPS / rate (trainer_main.cpp,
// resolve_link). Over a sweep that follows the machine; between the two builds of an A/B session
// it is noise they do not share. A probe that a passing disturbance slows stretches every
// all-reduce of its run: in the committed A/A sessions (experiments/ab/data/pass-per-build/runs.tar.xz) a run
// at 1.8x its neighbours' F lost a third of its throughput with no run delay to show for it, and
// the pairs' F ratios and throughput ratios correlate at -0.7. And a build whose GEMMs slowed
// would have its link slowed with them. The link is the machine's, not the build's: the session
// measures the rate once, before its first round, the way the trainers do (measure_gemm_flops:
// the model's largest forward GEMM at the run's local batch, in the run's GEMM library and
// threads), and every run of both builds gets the F that gives.
#pragma once

#include <map>
#include <string>

#include "harness/sweep/config.h"

namespace dpscale {

// Probes per distinct (model, local batch, GEMM library, threads); the fastest counts, as the
// trainers take their fastest rank's rate: a disturbance only ever slows a probe.
inline constexpr int kAbDilationProbes = 5;

struct SessionDilation {
  std::map<Point, std::string> at;  // the F of every data-parallel point that takes a link (SweepOptions)
  std::string line;                 // what was fixed and how, for the verdicts' notes; "" when nothing was
};

// The config's data-parallel points at one F each when its link_dilation is auto:TFLOPS on the
// CPU backend; nothing to fix otherwise (no link, a fixed factor, or a GPU backend, whose runs
// keep probing their own device: the line says so). Sets the process to the config's nice value,
// as the session's first pass would.
SessionDilation fix_session_dilation(const SweepConfig& c, int probes = kAbDilationProbes);

}  // namespace dpscale
