// bisect_repo.h — what `dpscale bisect` asks git: the repository's top, a name as a commit,
// ancestry, the first-parent commits between two commits and their subjects, and a detached
// worktree of one commit. Every call runs git from an argument vector (harness/common/subprocess.h)
// with `git -C REPO`; none changes the repository but `add_worktree` (git's worktree list).
#pragma once

#include <string>
#include <vector>

namespace dpscale::bisect {

struct Commit {
  std::string id;       // full id
  std::string subject;  // the first line of its message
  std::string short_id() const { return id.substr(0, 10); }
};

// The top of the repository holding `dir` ("" = the current directory), or "" when none does.
std::string repository_top(const std::string& dir);

// `name` as a commit of `repo` (`git rev-parse --verify NAME^{commit}`), or "" when it is none.
std::string commit_id(const std::string& repo, const std::string& name);

// Whether `ancestor` is an ancestor of `descendant` (git merge-base --is-ancestor).
bool is_ancestor(const std::string& repo, const std::string& ancestor, const std::string& descendant);

// GOOD, then the first-parent commits of GOOD..BAD oldest first (BAD last), with subjects.
std::vector<Commit> first_parent_range(const std::string& repo, const std::string& good, const std::string& bad);

// A worktree of `id` at `path`, detached: made when missing, left as it is when it is already
// a checkout of `id`; false (with git's words in *why) when git cannot make it.
bool add_worktree(const std::string& repo, const std::string& id, const std::string& path, std::string* why);

}  // namespace dpscale::bisect
