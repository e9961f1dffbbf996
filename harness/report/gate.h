// gate.h — `dpscale compare NEW BASE` (or `--baseline DIR`): the regression gate.
//
// The C++ side reads the files, refuses a baseline from another machine, pairs every
// data-parallel run with its round's single run (paired speedup s = throughput(DP) /
// throughput(single), the two measured side by side in time, so a load that hits both cancels),
// leaves out runs the machine disturbed (machine_state.h: by what their ranks lost waiting for a
// CPU; records older than that by the machine state, against the usual probe of all files
// compared), and hands the samples to harness/report/gate.py, which tests them (scipy:
// Mann-Whitney and Kolmogorov-Smirnov, Holm per curve, Hodges-Lehmann effect with a bootstrap
// interval) and prints the verdicts: docs/regression-gate.md.
//
// Exit status: 0 nothing regressed (same or improved), 1 a regression, 3 nothing regressed but
// something undecided, 2 bad input. Files with no samples to test (no point with 3 paired
// rounds on both sides: older or single-repeat files) fall back to the crude mode (compare.h,
// tolerance 0.10, its old default) with a line saying so; --tolerance asks for the crude mode outright.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "harness/report/analysis.h"
#include "harness/results/machine_state.h"
#include "harness/results/pairing.h"
#include "harness/results/results_file.h"
#include "harness/sweep/sweep.h"

namespace dpscale {

// The gate's constants, written once: gate_document hands them to gate.py with the samples.
inline constexpr int kGateMinSamples = 3;       // paired rounds a side needs to be tested
inline constexpr double kGateAlpha = 0.05;      // significance, family-wise per curve (Holm)
inline constexpr double kGateMinEffect = 0.03;  // a fraction: a 3% change of speedup counts

struct GateOptions {
  double alpha = kGateAlpha;
  double min_effect = kGateMinEffect;
  std::string format = "md";      // md | json
  std::string python = "/usr/bin/python3";
  std::string script;             // "" = $DPSCALE_GATE_SCRIPT, else <source>/harness/report/gate.py
  double crude_tolerance = 0.10;  // the crude mode's (its old default), when files hold no samples
  DisturbanceLimits limits;
};

// The files one comparison reads: NEW and the baseline file(s) from the same machine.
struct GateFiles {
  std::string now_path;
  ResultsFile now;
  std::vector<ResultsFile> bases;
  std::vector<std::string> notes;  // baseline files left out (another machine), and why
};

// Reads NEW and either BASE or every *.jsonl under DIR. Throws InputError (exit 2) for an
// unreadable, empty or torn file, a single baseline from another machine, or a DIR holding no
// baseline from NEW's machine.
GateFiles load_gate_files(const std::string& now_path, const std::string& base_path, const std::string& base_dir);

// The document gate.py reads (docs/regression-gate.md, "The gate's input"), the constants
// (alpha, min_effect, min_samples) included. `has_samples` is set when some point has enough
// paired rounds on both sides to test.
nlohmann::json gate_document(const GateFiles& f, const GateOptions& o, bool* has_samples = nullptr);

struct GateResult {
  int exit_code = 0;  // 0 | 1 | 3 (2 is thrown as InputError)
  std::string text;   // what the gate printed
  std::vector<Point> undecided;  // the undecided points, each once (a point judged on two metrics too)
  nlohmann::json verdicts;  // gate.py's verdicts (its --format json document); null in the crude mode
};

// Judges the files: the statistical gate, or the crude mode when they hold no samples.
GateResult run_gate(const GateFiles& f, const GateOptions& o);

// The statistics' script: GateOptions::script, else $DPSCALE_GATE_SCRIPT, else the source tree's.
std::string gate_script(const GateOptions& o);
// Throws InputError when that script is not there.
void check_gate_script(const GateOptions& o);

// Hands a document (gate_document's, or one `dpscale ab` adds paired points to) to gate.py and
// returns what it printed, its exit status and the undecided points. Throws InputError when
// the script is missing or fails.
GateResult judge_document(nlohmann::json doc, const GateOptions& o);

// `--rerun CONFIG`: while points are undecided, run two more rounds of their blocks (each point
// and the single run it pairs with: Point::block) into NEW with CONFIG, as Pinpoint adds
// attempts, until they are decided or NEW holds max_repeats rounds.
struct RerunOptions {
  std::string config;       // "" = no reruns
  int max_repeats = 0;      // 0 = twice the rounds NEW started with
  SweepOptions sweep;       // launch options; config, out, resume, repeats and only are set here
};
GateResult run_gate_with_reruns(GateFiles& f, const GateOptions& o, const RerunOptions& r);


// The points one more round of `points` runs: the union of their blocks (Point::block).
std::set<Point> blocks_of(const std::vector<Point>& points);
// "small naive K=2, small bucketed K=2 cap 4 MB": the points, described, for a progress line.
std::string describe_points(const std::vector<Point>& points);

}  // namespace dpscale
