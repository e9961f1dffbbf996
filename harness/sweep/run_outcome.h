// run_outcome.h — what a finished run process amounts to: its record, or why it failed.
//
// Failure reasons, in the order they are checked: could not start, timed out (group killed),
// killed by a signal, non-zero exit (with its stderr's reason_line), no RESULTS_JSON line,
// a record that does not parse, a record of a different run than the one launched (e.g. an
// mpirun that started K singletons instead of one K-rank job).
#pragma once

#include <optional>
#include <string>

#include "harness/sweep/config.h"
#include "harness/common/subprocess.h"
#include "contract/record.h"

namespace dpscale {

struct RunOutcome {
  std::optional<RunRecord> record;  // set when the run succeeded
  std::string reason;               // set when it failed
};

RunOutcome judge_run(const ProcessResult& r, const SweepPoint& p, double timeout_s);

// The last non-empty line of a process's stderr, shortened to at most `max` characters.
std::string last_line(const std::string& text, size_t max = 300);

// Why a run failed, in the trainer's own words: the last stderr line that a trainer wrote
// ("train_dp_naive: ..." or "train_dp_naive (rank 1): ...", executables from the mode table),
// not mpirun's banner that follows it. With no trainer line, mpirun's own first message: the
// first of Open MPI's help blocks (text between lines of dashes) that says what went wrong,
// joined into one line ("Open RTE detected a parse error in the hostfile: H It occured on line
// number 1 ..."), not the hints that close its output ("Set MCA parameter
// orte_base_help_aggregate ..."). Else last_line(). Shortened as last_line().
std::string reason_line(const std::string& err, size_t max = 300);

}  // namespace dpscale
