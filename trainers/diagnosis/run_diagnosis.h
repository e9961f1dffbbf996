// run_diagnosis.h — what the diagnosis adds to a run after its timed epochs, in one place for
// trainer_main: gather every rank's timing, run the --triad, merge and write the --trace, and
// fill the record's diagnosis fields (per-rank times, loader, bottleneck, triad, bandwidths).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "comm/world.h"
#include "contract/record.h"
#include "trainers/grad_sync.h"
#include "trainers/rank_setup.h"
#include "trainers/diagnosis/step_probe.h"
#include "trainers/diagnosis/trace.h"
#include "trainers/train_loop.h"
#include "trainers/diagnosis/triad.h"

namespace dpscale {

struct DiagnosisData {
  std::vector<RankTiming> timings;  // rank 0: every rank's, in rank order
  std::optional<TriadResult> triad;
  std::vector<int64_t> unit_bytes;  // rank 0's all-reduces per step
  std::vector<double> unit_s;
  // rank 0 with --trace: every rank's events, merged and written by fill_diagnosis once the
  // straggler rule has run (the trace marks the straggler's slow spans).
  std::vector<std::string> trace_events;
};

// A tracer when --trace is given, else null.
std::unique_ptr<Tracer> make_tracer(RankSetup& s);

// Collective: every rank calls it after run_training. Gathers the trace's events on rank 0.
DiagnosisData finish_diagnosis(RankSetup& s, GradSync& sync, Communicator* comm, World& world, StepProbe& probe,
                               Tracer* tracer);

// Rank 0: the diagnosis fields of `r` (the rest of it built already); writes the trace file.
void fill_diagnosis(RunRecord& r, const DiagnosisData& d, const PerRankEpochs& epochs, const RankSetup& s);

}  // namespace dpscale
