// bisect_checks.cpp — what `dpscale bisect` refuses before any build (bisect.h).
#include <filesystem>

#include "contract/modes.h"
#include "contract/option_paths.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "harness/bisect/bisect.h"

namespace dpscale::bisect {

namespace {

namespace fs = std::filesystem;

std::string commit_of(const std::string& repo, const std::string& what, const std::string& name) {
  const std::string id = commit_id(repo, name);
  if (id.empty()) throw InputError(what + " '" + name + "' is not a commit of " + repo);
  return id;
}

}  // namespace

BisectPlan check_bisect_inputs(BisectOptions& o) {
  BisectPlan p;
  std::error_code ec;
  if (fs::exists(o.work, ec) && !fs::is_directory(o.work, ec)) {
    throw OptionError("--work", "'" + o.work + "' is a file, not a directory");
  }
  const std::string repo_arg = o.repo.empty() ? "." : o.repo;
  p.repo = repository_top(repo_arg);
  if (p.repo.empty()) {
    throw OptionError("--repo", "'" + (o.repo.empty() ? fs::current_path(ec).string() : o.repo) +
                                    "' is not in a git repository");
  }
  const std::string good = commit_of(p.repo, "GOOD", o.good), bad = commit_of(p.repo, "BAD", o.bad);
  if (good == bad) throw InputError("GOOD '" + o.good + "' and BAD '" + o.bad + "' are the same commit: nothing lies between them");
  if (!is_ancestor(p.repo, good, bad)) {
    throw InputError("GOOD '" + o.good + "' is not an ancestor of BAD '" + o.bad + "': bisect searches the commits from GOOD to BAD");
  }
  const SweepConfig c = load_ab_config(o.config_path);
  for (ModeRef mode : c.modes) p.targets.push_back(mode->executable);
  if (o.ab.max_rounds < o.ab.rounds) {
    throw OptionError("--max-rounds", "must be at least --rounds (" + std::to_string(o.ab.rounds) + "; got " +
                                          std::to_string(o.ab.max_rounds) + ")");
  }
  check_gate_script(o.ab.gate);
  try {
    check_writable_dir(o.work);
  } catch (const ValueError& e) {
    throw OptionError("--work", e.what());
  }
  p.work = fs::absolute(o.work, ec).lexically_normal().string();
  p.config_path = fs::absolute(o.config_path, ec).lexically_normal().string();
  p.commits = first_parent_range(p.repo, good, bad);
  if (p.commits.size() < 2 || p.commits.back().id != bad) {
    throw InputError("BAD '" + o.bad + "' is not on a first-parent line from GOOD '" + o.good + "'");
  }
  return p;
}

}  // namespace dpscale::bisect
