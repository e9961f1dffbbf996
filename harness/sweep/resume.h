// resume.h — which results file `dpscale sweep --resume` may continue, and the one repair it may
// make. The file is judged whole before anything in it changes: every line a results line, every
// sweep line made by this config with these settings (run.config, run.config_hash). Only then may
// a cut-off last line (a sweep killed while writing it) be removed, and only from a file that
// holds at least one complete line of this config — a file that is not one of its results is
// refused as it is, byte for byte.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "harness/results/results_file.h"

namespace dpscale {

struct ResumeState {
  std::set<std::string> done;  // run ids the file holds as ok: not run again
  size_t torn_bytes = 0;       // the cut-off last line repair_for_resume removes
  std::vector<std::string> warnings;  // "FILE: ..." for the caller to print
};

// Reads `path` and checks it may be continued by config `name` with config hash `hash`. Throws
// InputError (exit 2) naming the first line that forbids it; changes nothing.
ResumeState check_resume_file(const std::string& path, const std::string& name, const std::string& hash);

// Makes the repair check_resume_file allowed, under the sweep's --out lock (so the file is as it
// was checked): cuts the torn last line, or ends a complete one with its newline
// (repair_torn_tail). Returns the bytes cut.
size_t repair_for_resume(const std::string& path);

}  // namespace dpscale
