// run_outcome.cpp — from a ProcessResult to a record or a failure reason.
#include "harness/sweep/run_outcome.h"

#include <cstring>
#include <sstream>

#include "contract/modes.h"
#include "contract/option_values.h"

namespace dpscale {

std::string last_line(const std::string& text, size_t max) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t begin = text.rfind('\n', end);
  std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
  if (line.size() > max) line = line.substr(0, max) + "...";
  return line;
}

namespace {

std::string shortened(std::string line, size_t max) {
  if (line.size() > max) line = line.substr(0, max) + "...";
  return line;
}

// Open MPI frames each message (its "help" text) between lines of dashes.
bool is_rule(const std::string& line) { return line.size() >= 20 && line.find_first_not_of('-') == std::string::npos; }

// The first help block that says what went wrong, as one line; "" when the text has none. The
// banner of a job whose process failed ("Primary job terminated normally, but 1 process
// returned a non-zero exit code") only announces the block after it.
std::string first_help_block(const std::string& err) {
  std::istringstream in(err);
  bool inside = false;  // rules open and close a block in turn
  std::string block;
  for (std::string line; std::getline(in, line);) {
    if (is_rule(line)) {
      if (inside && !block.empty() && block.rfind("Primary job", 0) != 0) return block;
      inside = !inside;
      block.clear();
      continue;
    }
    const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (!inside || b == std::string::npos) continue;
    if (!block.empty()) block += ' ';
    block.append(line, b, e - b + 1);
  }
  return "";
}

}  // namespace

std::string reason_line(const std::string& err, size_t max) {
  // Under mpirun a failing trainer's line is followed by mpirun's banner ("-----", "Primary job
  // terminated normally, but 1 process returned a non-zero exit code...").
  std::string found;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    for (const ModeInfo& m : all_modes()) {
      const std::string exe = m.executable;
      if (line.rfind(exe + ":", 0) == 0 || line.rfind(exe + " (rank", 0) == 0) found = line;
    }
  }
  if (found.empty()) found = first_help_block(err);
  if (found.empty()) return last_line(err, max);
  return shortened(found, max);
}

RunOutcome judge_run(const ProcessResult& r, const Point& p, double timeout_s) {
  RunOutcome o;
  const std::string tail = reason_line(r.err);
  auto with_tail = [&](std::string s) { return tail.empty() ? s : s + ": " + tail; };
  if (r.spawn_failed) {
    o.reason = with_tail("could not start");
  } else if (r.timed_out) {
    o.reason = "timed out after " + format_number(timeout_s) + " s (process group killed)";
  } else if (r.term_signal != 0) {
    o.reason = with_tail("killed by signal " + std::to_string(r.term_signal) + " (" + strsignal(r.term_signal) + ")");
  } else if (r.exit_code != 0) {
    o.reason = with_tail("exit status " + std::to_string(r.exit_code));
  }
  if (!o.reason.empty()) return o;

  const auto j = find_results_json(r.out);
  if (!j) {
    o.reason = "no RESULTS_JSON line in the output";
    return o;
  }
  RunRecord rec;
  try {
    rec = record_from_json(*j);
  } catch (const std::exception& e) {
    o.reason = std::string("bad RESULTS_JSON record: ") + e.what();
    return o;
  }
  if (rec.mode != p.mode.name() || rec.world_size != p.world_size) {
    o.reason = "the record is of " + rec.mode + " K=" + std::to_string(rec.world_size) + ", not the " + p.mode.name() +
               " K=" + std::to_string(p.world_size) + " run that was launched";
    return o;
  }
  o.record = std::move(rec);
  return o;
}

}  // namespace dpscale
