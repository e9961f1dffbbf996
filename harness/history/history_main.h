// history_main.h — the `dpscale history` subcommand: scaling curves kept over revisions.
// main.cpp adds it with add_history_command() and, when chosen, calls run(); the rest is here.
//
//   dpscale history add FILE.jsonl... --rev REV [--rev-time ISO] [--db PATH]
//   dpscale history show    [--db PATH] [filters] [--metric M] [--format md|json]
//   dpscale history changes [--db PATH] [filters] [--metric M] [--min-effect PCT] [--alpha A]
//                           [--permutations N] [--format md|json] [--record]
//   dpscale history html OUT/ [--db PATH] [filters] [--metric M]
//   dpscale history export [--db PATH] [--out FILE.jsonl]
//   dpscale history import FILE.jsonl [--db PATH]
//   dpscale history accept --rev REV [--db PATH] [filters] [--metric M]
//   filters: --machine TEXT  --model NAME  --mode NAME  --world-size K  --match TEXT
//
// This side reads results files with the harness's reader and turns them into rows
// (history_rows.h); the store, the change points and the page are Python
// (harness/history/history.py, Debian's sqlite3, numpy and scipy): docs/history.md.
// Exit status: 0 fine; 1 (changes) some series' newest change since its newest mark (a change
// `--record` reported or `accept` accepted) is a regression of at least --min-effect; 2 bad input, one line; 4 the Python side failed (a missing package, a fault).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>

namespace dpscale::history {

struct HistoryArgs;

class HistoryCommand {
 public:
  explicit HistoryCommand(CLI::App& app);
  ~HistoryCommand();
  bool chosen() const { return cmd_->parsed(); }
  // Exit status; throws InputError (exit 2, one line) for bad input.
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<HistoryArgs> a_;
};

std::unique_ptr<HistoryCommand> add_history_command(CLI::App& app);

}  // namespace dpscale::history
