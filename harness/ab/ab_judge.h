// ab_judge.h — what `dpscale ab` hands the gate's statistics (harness/report/gate.py): build B
// against build A, from the two results files of one session whose rounds alternate A B B A,
// B A A B (ab.h).
//
// Two questions per point, each a curve of its own for Holm (model × mode × link, per metric):
//   throughput  B's run over A's run of the same round, a paired ratio per round (gate.py's
//               paired test: Wilcoxon signed-rank, one-sample Hodges-Lehmann, bootstrap over
//               rounds). Every point, the single runs included: a change that slows the single
//               run and the data-parallel runs alike shows here and not in the speedups.
//   speedup     B's speedup over A's in the same round, each build's data-parallel run over its
//               own single run: the data-parallel pair's ratio over the single pair's, paired and
//               tested as the throughput is. The two runs of a point are seconds apart (ab.h), so
//               a drift of the machine over a round moves both builds' runs alike and leaves the
//               ratio; `dpscale compare`'s unpaired test of two sets of speedups cannot use that.
//
// A round's pair is left out when one half failed or was disturbed (machine_state.h) and the
// other was not, or when neither was disturbed and yet their run delays are further apart than
// the contention may move a ratio judged at the minimum effect. Two halves both disturbed by their
// ranks' run delay alone, by shares close enough that the contention moves their ratio by at most
// half the minimum effect (lost_alike, machine_state.h; ab.cpp sets the limit), still judge:
// docs/regression-gate.md, "A pair whose halves lost alike", says why that is sound. A round's
// speedup needs both its data-parallel pair and its single pair fit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/report/gate.h"
#include "harness/results/results_file.h"

namespace dpscale {

struct AbLabels {
  std::string a_dir, b_dir;  // the two builds' trainer directories, for the title
  int rounds = 0;            // rounds run so far
};

// The paired throughput points of A and B (status "compared", "test": "paired"; "failed" when
// every run of B failed where A's ran), keyed and curved as gate_document's, metric "throughput".
nlohmann::json throughput_points(const ResultsFile& a, const ResultsFile& b, const GateOptions& o);

// The fraction of the minimum effect a significant estimate must reach to be a verdict: the
// minimum effect is the smallest loss a session must catch, and a true loss of that size has its
// estimate beyond three quarters of it nearly always, while two identical builds rarely show a
// significant three quarters (docs/ab.md, "How well it catches a change").
inline constexpr double kAbMinEffectLine = 0.75;

// The paired speedup points of A and B, one per data-parallel point, metric "speedup".
nlohmann::json speedup_points(const ResultsFile& a, const ResultsFile& b, const GateOptions& o);

// What must hold before the two files are judged, each holding runs already (refuse_no_runs):
// both measured on one machine (the records' `system` fingerprint: a session runs both builds on
// one, and the gate compares a machine with itself), and each build with a successful run. A
// build none of whose runs ran is neither a baseline nor a candidate: judged, it would be a
// regression of every point (B) or leave every point undecided (A), which CI lets through.
// Throws InputError naming the file, or the build with its first run's reason.
void check_judgeable(const ResultsFile& a, const ResultsFile& b, const AbLabels& labels);

// The whole document: the speedup points and the throughput points, with the gate's constants
// and frame (gate_document with B as new and A as the baseline), the title.
nlohmann::json ab_document(const ResultsFile& a, const ResultsFile& b, const GateOptions& o, const AbLabels& labels);

}  // namespace dpscale
