// history_rows.h — a results file as the rows of the history store: one JSON object per
// successful run, the one contract between this C++ side and the Python store
// (harness/history/dpscale_history/rows.py checks it; docs/history.md, "The row", says each
// field once). `dpscale history export` writes rows in the same form and `import` reads them.
//
// The point comes from the harness's own point (harness/point/point.h: history_key(), its key
// and the row's `point`, describe() and curve()), the machine from the lines' `system` fingerprint the gate
// compares, and each data-parallel run's speedup from the gate's pairing (pair_runs, harness/results/pairing.h) — the
// Python side never derives any of them again.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/results/results_file.h"

namespace dpscale::history {

inline constexpr const char* kRowSchema = "dpscale.history.row/1";

// The revision the runs of one `add` measured: `name` as the user gave it, the commit id and
// commit time (UTC, ISO 8601) where git knows it, else "" and the --rev-time given.
struct Revision {
  std::string name;
  std::string commit_id;
  std::string commit_time;
};

// One row per successful run of `f`, in the file's order. Failed runs are not rows (`failed`,
// when given, counts them).
std::vector<nlohmann::json> rows_of(const ResultsFile& f, const Revision& rev, int* failed = nullptr);

}  // namespace dpscale::history
