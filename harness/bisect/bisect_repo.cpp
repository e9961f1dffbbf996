// bisect_repo.cpp — the git calls of `dpscale bisect` (bisect_repo.h).
#include "harness/bisect/bisect_repo.h"

#include <filesystem>
#include <sstream>

#include "core/errors.h"
#include "harness/common/subprocess.h"

namespace dpscale::bisect {

namespace {

namespace fs = std::filesystem;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

ProcessResult git(const std::string& repo, std::vector<std::string> args, double timeout_s = 60) {
  std::vector<std::string> argv = {"git"};
  if (!repo.empty()) argv.insert(argv.end(), {"-C", repo});
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions po;
  po.timeout_s = timeout_s;
  return run_process(argv, po);
}

}  // namespace

std::string repository_top(const std::string& dir) {
  const ProcessResult p = git(dir.empty() ? "." : dir, {"rev-parse", "--show-toplevel"});
  return !p.spawn_failed && p.exit_code == 0 ? trimmed(p.out) : "";
}

std::string commit_id(const std::string& repo, const std::string& name) {
  // A name starting with '-' would be read by git as an option.
  if (name.empty() || name[0] == '-') return "";
  const ProcessResult p = git(repo, {"rev-parse", "--verify", "--quiet", name + "^{commit}"});
  return p.exit_code == 0 ? trimmed(p.out) : "";
}

bool is_ancestor(const std::string& repo, const std::string& ancestor, const std::string& descendant) {
  return git(repo, {"merge-base", "--is-ancestor", ancestor, descendant}).exit_code == 0;
}

std::vector<Commit> first_parent_range(const std::string& repo, const std::string& good, const std::string& bad) {
  // %x1f between id and subject: a subject may hold any printable character but that one.
  const ProcessResult p = git(repo, {"log", "--first-parent", "--reverse", "--format=%H%x1f%s", good + ".." + bad}, 300);
  if (p.exit_code != 0) throw InputError("git cannot list " + good + ".." + bad + ": " + trimmed(p.err));
  std::vector<Commit> out;
  const ProcessResult g = git(repo, {"log", "-1", "--format=%H%x1f%s", good});
  std::istringstream lines(trimmed(g.out) + "\n" + p.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t sep = line.find('\x1f');
    if (sep == std::string::npos) continue;
    out.push_back({line.substr(0, sep), line.substr(sep + 1)});
  }
  return out;
}

bool add_worktree(const std::string& repo, const std::string& id, const std::string& path, std::string* why) {
  std::error_code ec;
  if (fs::exists(fs::path(path) / ".git", ec)) {
    const ProcessResult head = git(path, {"rev-parse", "HEAD"});
    if (head.exit_code == 0 && trimmed(head.out) == id) return true;
    // Something else stands there (another commit, a broken checkout): made again.
    git(repo, {"worktree", "remove", "--force", path});
    fs::remove_all(path, ec);
  }
  git(repo, {"worktree", "prune"});
  fs::create_directories(fs::path(path).parent_path(), ec);
  const ProcessResult p = git(repo, {"worktree", "add", "--quiet", "--detach", path, id}, 600);
  if (p.exit_code != 0) {
    if (why) *why = trimmed(p.err);
    return false;
  }
  return true;
}

}  // namespace dpscale::bisect
