// ab.h — `dpscale ab CONFIG --a DIR --b DIR`: build B against build A in one session.
//
// `dpscale compare` judges today's sweep against a baseline measured hours before, and the
// machine drifts between those hours. ab runs both builds now, alternately, as Chromium's
// Pinpoint does for scalar benchmarks: in round r every point of CONFIG is run by build A and
// then at once by build B (or B then A), the rounds in the order A B B A, B A A B, A B B A, ...
// so that each B run has the A run of the same point next to it in time (seconds apart, not a
// whole pass of the config), and each build leads as often as it follows. Each run is a sweep
// pass of CONFIG with its build's trainers (run_sweep: the same points, launch, machine state and
// reruns of disturbed runs as `dpscale sweep`), into OUT/a.jsonl and OUT/b.jsonl, every run of
// both builds at the one link dilation the session fixed first (ab_dilation.h). ab_judge.h turns
// the two files into the points gate.py judges.
//
// While some point is undecided, two more rounds (one more block) of it and of the single run it
// pairs with (Point::block) are run, up to --max-rounds. Exit status: 0 same or better, 1 a regression, 3 undecided after
// the last round, 2 bad input (checked before any run: CONFIG, both directories' trainers,
// --out, the statistics' script; and before any verdict, a build none of whose runs succeeded:
// ab_judge.h, check_judgeable), 130 interrupted.
#pragma once

#include <string>

#include "harness/report/gate.h"
#include "harness/sweep/config.h"
#include "harness/sweep/sweep.h"

namespace dpscale {

// The rounds of a session, by default: 6 to start (A B B A, B A A B, A B B A) — the fewest at
// which a Wilcoxon signed-rank test of one point can reach p < 0.05 (0.031 when every round
// agrees) — and at most 12.
inline constexpr int kAbRounds = 6;
inline constexpr int kAbMaxRounds = 12;

struct AbOptions {
  std::string config_path;
  std::string a_dir, b_dir;   // the two builds' trainers (a build's bin/)
  std::string out_dir;        // "" = results/ab-<config>-<UTC time>/
  std::string judge_dir;      // not "": judge a finished session's a.jsonl and b.jsonl here, running nothing
  int rounds = kAbRounds;
  int max_rounds = kAbMaxRounds;
  GateOptions gate;           // alpha, min_effect (a fraction), format, python, script
  SweepOptions sweep;         // probe seconds and launch; config, bin dir, out and rounds are set per pass
};

// Which build runs first in round r (0-based): A B B A, B A A B, ...
bool a_leads(int round);

// The rounds a session has run once it has added rounds for its undecided points after `done`:
// one more block of two, whose rounds a_leads gives one to each build, so that the rounds run
// stay balanced (each build first as often as second); at most `max_rounds`.
int rounds_after_undecided(int done, int max_rounds);

// CONFIG read and checked as the session reads it: it parses and has the single-device mode.
// Throws InputError naming the file. (`dpscale bisect` checks its config with this before any build.)
SweepConfig load_ab_config(const std::string& path);

// Every check, before anything is run or made: CONFIG parses and has the single-device mode,
// --a and --b are two directories each holding the trainers CONFIG's modes need, --out is a
// directory that can be made and holds no results yet, --max-rounds is not below --rounds, the
// statistics' script is there, and each build's sweep would start. Throws InputError naming
// the option; changes nothing.
void check_ab_inputs(AbOptions& o);

// Runs the session and returns gate.py's result: its printed verdicts (text, not yet printed),
// the verdicts as JSON, and the exit status (130 when interrupted, text then empty).
GateResult run_ab_session(AbOptions o);

// Runs the session and prints the verdicts (stdout). Returns the exit status.
int run_ab(AbOptions o);

}  // namespace dpscale
