// results_file.h — read a sweep's JSONL file, read-only (report, compare and plot never rewrite it).
//
// A killed sweep can leave its last line cut short: such a line (JSON that ends before it is
// complete) is skipped with a warning. A successful run that a line before already holds (same
// run_id and point: two sweeps that appended to one file before the --out lock existed) is
// skipped with a warning, so no point is counted twice — unless it is a rerun (a larger
// `run.attempt`: the sweep reran a run the machine disturbed), which replaces the line it reran. Any other line that is not a sweep line or a trainer
// record is foreign: InputError naming the file and line (exit 2).
#pragma once

#include <string>
#include <vector>

#include "harness/results/sweep_line.h"

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

// The bytes after the text's last newline when they are a cut-off line (not a complete JSON
// value; a sweep killed while writing it), else 0.
size_t torn_tail_bytes(const std::string& text);
// InputError "FILE: no runs in the file" when it holds none (empty, blank, or nothing but a
// cut-off line): every reader that judges or reports refuses it rather than say something of nothing.
void refuse_no_runs(const ResultsFile& f);

// The machine the file's runs were measured on: the first line's that names one (unknown when
// none does).
MachineFingerprint machine_of(const ResultsFile& f);

// "OTHER was measured on another machine (its machine; REF: its machine)" when both files name
// their machine and the two differ; "" when they are one machine or either is unknown. Its
// callers refuse (or leave out) OTHER: a comparison of two machines measures the machines.
std::string other_machine(const ResultsFile& other, const ResultsFile& ref);

// InputError naming the file and line of the first run whose record says gpu_shared (--share-gpu
// put ranks on one GPU): `what` (report, compare, predict) draws no speedup from such a file.
void refuse_gpu_shared(const ResultsFile& f, const std::string& what);

// A sweep killed while writing leaves a cut-off last line. If the text after the file's last
// newline is not a complete JSON value, the file is truncated to that newline (so no later read
// warns about it) and the number of bytes removed is returned; a complete last line that only
// lacks its newline gets one (0 returned). `--resume` calls this under the --out lock, only
// after the file was accepted whole (resume.h).
size_t repair_torn_tail(const std::string& path);

// Whether the file at `path` ends in the middle of a line: an appending sweep starts a new line
// first, so its record is not glued onto a cut-off one.
bool ends_mid_line(const std::string& path);

}  // namespace dpscale
