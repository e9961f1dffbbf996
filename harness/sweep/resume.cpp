// resume.cpp — the --resume acceptance and its one repair (resume.h).
#include "harness/sweep/resume.h"

#include <fstream>
#include <sstream>

#include "core/errors.h"

namespace dpscale {

namespace {

// --resume continues a file only with the config that made it: same name (run ids are keyed on
// it) and the same config_hash (how every point is run). Lines of older sweeps carry no hash and
// cannot be checked: one warning says so. Returns how many lines this config made.
int check_made_by(const ResultsFile& f, const std::string& name, const std::string& hash,
                  std::vector<std::string>& warnings) {
  int unhashed = 0, ours = 0;
  for (const SweepEntry& e : f.entries) {
    if (e.run.config.empty()) continue;  // a bare trainer record: no sweep made it
    const std::string where = f.path + ":" + std::to_string(e.line_no);
    if (e.run.config != name) {
      throw InputError("--resume: " + where + " was made by config '" + e.run.config + "', not '" + name +
                       "': choose another --out");
    }
    if (e.run.config_hash.empty()) {
      ++unhashed;
    } else if (e.run.config_hash != hash) {
      throw InputError("--resume: " + where + " was made with other options, link or backend (config hash " +
                       e.run.config_hash + ", now " + hash + "): choose another --out, or restore the config");
    }
    ++ours;
  }
  if (unhashed) {
    warnings.push_back(f.path + ": " + std::to_string(unhashed) +
                       " lines carry no config hash (an older dpscale); cannot check they match this config");
  }
  return ours;
}

}  // namespace

ResumeState check_resume_file(const std::string& path, const std::string& name, const std::string& hash) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("--resume: " + path + ": cannot read the results file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // Every line a results line (a text file that is not one is refused here, whole), ...
  const ResultsFile f = parse_results(text, path);
  ResumeState s;
  s.warnings = f.warnings;
  // ... every sweep line this config's, with these settings ...
  const int ours = check_made_by(f, name, hash, s.warnings);
  // ... and a cut-off last line only in a file this config has written to: a file holding
  // nothing but a cut-off line cannot say whose it is.
  s.torn_bytes = torn_tail_bytes(text);
  if (s.torn_bytes > 0 && ours == 0) {
    throw InputError("--resume: " + path + " ends in a cut-off line and holds no complete line of config '" + name +
                     "': not a results file this config can continue; choose another --out");
  }
  for (const SweepEntry& e : f.entries) {
    if (e.ok && !e.run.run_id.empty()) s.done.insert(e.run.run_id);
  }
  return s;
}

size_t repair_for_resume(const std::string& path) { return repair_torn_tail(path); }

}  // namespace dpscale
