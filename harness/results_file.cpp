// results_file.cpp — JSONL reading with the truncated-line rule.
#include "results_file.h"

#include <fstream>
#include <sstream>

#include "models/errors.h"

namespace dpscale {

ResultsFile parse_results(const std::string& text, const std::string& path) {
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
    }
    try {
      SweepEntry e = parse_sweep_line(j);
      e.line_no = line_no;
      f.entries.push_back(std::move(e));
    } catch (const std::exception& e) {
      throw InputError(where + ": not a results line: " + e.what());
    }
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

bool ends_mid_line(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return false;
  in.seekg(-1, std::ios::end);
  char c = 0;
  in.get(c);
  return c != '\n';
}

}  // namespace dpscale
