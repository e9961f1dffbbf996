// results_file.cpp — JSONL reading with the truncated-line rule.
#include "harness/results/results_file.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "core/errors.h"

namespace dpscale {

namespace {

// What makes two successful lines the same measurement: the run id, the point it names, the round.
using HeldKey = std::tuple<std::string, Point, int>;
HeldKey held_key(const SweepEntry& e) { return {e.run.run_id, e.point, e.repeat}; }

}  // namespace

ResultsFile parse_results(const std::string& text, const std::string& path) {
  std::map<HeldKey, size_t> ok_lines;  // -> index in f.entries of the run it holds
  ResultsFile f;
  f.path = path;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // Cut short: the parser ran off the end of the line while a value was still open (its
      // error position lies past the last byte); a mistake inside a line fails at or before its
      // last byte. Only a sweep killed in the middle of writing a line leaves this.
      const bool truncated = line.front() == '{' && e.byte > line.size();
      if (truncated) {
        f.warnings.push_back(where + ": truncated line skipped (an interrupted sweep?)");
        continue;
      }
      throw InputError(where + ": not a results line (not JSON)");
    } catch (const nlohmann::json::exception&) {
      // Well-formed JSON the parser still refuses: a number beyond a double's range
      // (out_of_range 406, found by fuzz_results_line).
      throw InputError(where + ": not a results line (a number out of range)");
    }
    SweepEntry e;
    try {
      e = parse_sweep_line(j);
      e.line_no = line_no;
    } catch (const std::exception& ex) {
      throw InputError(where + ": not a results line: " + ex.what());
    }
    if (e.ok && !e.run.run_id.empty()) {
      const auto [held, fresh] = ok_lines.emplace(held_key(e), f.entries.size());
      if (!fresh) {
        SweepEntry& first = f.entries[held->second];
        // A rerun of a run the machine disturbed (run.attempt counts them) takes its place: the
        // round keeps one measurement, the one fit to judge.
        if (e.run.attempt > first.run.attempt) {
          first = std::move(e);
          continue;
        }
        f.warnings.push_back(where + ": " + e.run.run_id + " is already in line " + std::to_string(first.line_no) +
                             "; duplicate skipped");
        continue;
      }
    }
    f.entries.push_back(std::move(e));
  }
  return f;
}

ResultsFile read_results(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the results file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_results(ss.str(), path);
}

size_t torn_tail_bytes(const std::string& text) {
  if (text.empty() || text.back() == '\n') return 0;
  const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  const std::string tail = text.substr(keep);
  if (tail.find_first_not_of(" \t\r") == std::string::npos || nlohmann::json::accept(tail)) return 0;
  return text.size() - keep;
}

size_t repair_torn_tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.empty() || text.back() == '\n') return 0;
  const size_t cut = torn_tail_bytes(text);
  if (cut == 0) {
    std::ofstream(path, std::ios::binary | std::ios::app) << "\n";
    return 0;
  }
  std::filesystem::resize_file(path, text.size() - cut);
  return cut;
}

bool ends_mid_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return false;
  in.seekg(-1, std::ios::end);
  char c = 0;
  in.get(c);
  return c != '\n';
}

void refuse_no_runs(const ResultsFile& f) {
  if (f.entries.empty()) throw InputError(f.path + ": no runs in the file");
}

MachineFingerprint machine_of(const ResultsFile& f) {
  for (const SweepEntry& e : f.entries) {
    if (e.machine.known) return e.machine;
  }
  return {};
}

std::string other_machine(const ResultsFile& other, const ResultsFile& ref) {
  const MachineFingerprint o = machine_of(other), r = machine_of(ref);
  if (!o.known || !r.known || o == r) return "";
  return other.path + " was measured on another machine (" + o.describe() + "; " + ref.path + ": " + r.describe() + ")";
}

void refuse_gpu_shared(const ResultsFile& f, const std::string& what) {
  for (const SweepEntry& e : f.entries) {
    if (!e.record || !e.record->gpu_shared) continue;
    throw InputError(f.path + ":" + std::to_string(e.line_no) + ": a --share-gpu run (gpu_shared: " +
                     std::to_string(e.record->world_size) + " ranks, some on one GPU) checks correctness, not speed: " +
                     what + " draws no speedup from it (keep such runs in a file of their own)");
  }
}

}  // namespace dpscale
