// results_file.h — read a sweep's JSONL file, read-only (report, compare and plot never rewrite it).
//
// A killed sweep can leave its last line cut short: such a line (JSON that ends before it is
// complete) is skipped with a warning. Any other line that is not a sweep line or a trainer
// record is foreign: InputError naming the file and line (exit 2).
#pragma once

#include <string>
#include <vector>

#include "harness/sweep_line.h"

namespace dpscale {

struct ResultsFile {
  std::string path;
  std::vector<SweepEntry> entries;
  std::vector<std::string> warnings;  // "FILE:LINE: ..." for the caller to print
};

// Throws InputError when the file cannot be read or holds a foreign line.
ResultsFile read_results(const std::string& path);

// Same, from text (tests; `path` only names it in messages).
ResultsFile parse_results(const std::string& text, const std::string& path);

// Whether the file at `path` ends in the middle of a line: an appending sweep starts a new line
// first, so its record is not glued onto a cut-off one.
bool ends_mid_line(const std::string& path);

}  // namespace dpscale
