// revision.h — what `--rev REV [--rev-time ISO]` names: a commit of the repository at hand
// (its full id and commit time, from git), or a label git does not know with the time the user
// gives it (a build with an injected slowdown, another repository's revision).
#pragma once

#include <string>

#include "harness/history/history_rows.h"

namespace dpscale::history {

// Resolves REV with `git rev-parse` in the working directory. A commit: its id and commit time
// (`--rev-time` is then refused: git's time orders it). Not a commit: `rev_time` must be given.
// Throws InputError (one line) otherwise, naming the options as `flag` and `flag`-time (--rev-a,
// --rev-a-time for an A/B directory's build A).
Revision resolve_revision(const std::string& rev, const std::string& rev_time, const std::string& flag = "--rev");

// "2026-11-26T08:00:00Z" from "2026-11-26T09:00:00+01:00", "2026-11-26T08:00:00Z" or
// "2026-11-26T08:00" (no zone: UTC). Throws InputError naming `what`.
std::string utc_iso(const std::string& text, const std::string& what);

}  // namespace dpscale::history
