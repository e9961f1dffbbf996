// ab.cpp — the session of `dpscale ab`: its checks, the alternating rounds, the verdicts (ab.h).
#include "harness/ab/ab.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "contract/modes.h"
#include "contract/option_paths.h"
#include "contract/record.h"
#include "core/errors.h"
#include "harness/ab/ab_dilation.h"
#include "harness/ab/ab_judge.h"
#include "harness/sweep/config.h"
#include "harness/sweep/progress.h"
#include "harness/results/results_file.h"
#include "harness/sweep/sweep.h"

namespace dpscale {

namespace {

namespace fs = std::filesystem;

// The points whose rounds are added (the undecided points' blocks, Point::block); nullopt: every point.
using Wanted = std::optional<std::set<Point>>;

std::string file_of(const AbOptions& o, char build) { return (fs::path(o.out_dir) / (build == 'A' ? "a.jsonl" : "b.jsonl")).string(); }

SweepOptions pass_options(const AbOptions& o, char build, int rounds) {
  SweepOptions so = o.sweep;
  so.config_path = o.config_path;
  so.bin_dir = build == 'A' ? o.a_dir : o.b_dir;
  so.out_path = file_of(o, build);
  so.resume = true;  // every pass after a build's first continues its file
  so.repeats = rounds;
  so.dry_run = false;
  return so;
}

void check_trainers(const std::string& flag, const std::string& dir, const SweepConfig& c) {
  for (ModeRef mode : c.modes) {
    const fs::path exe = fs::path(dir) / mode->executable;
    std::error_code ec;
    if (!fs::is_regular_file(exe, ec) || ::access(exe.c_str(), X_OK) != 0) {
      throw OptionError(flag, "'" + dir + "' holds no executable " + exe.filename().string() +
                                  " (give a build's bin/, which holds the trainers of every mode)");
    }
  }
}

void check_out_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw OptionError("--out", "'" + dir + "' is a file, not a directory");
    for (const char* name : {"a.jsonl", "b.jsonl"}) {
      if (fs::exists(fs::path(dir) / name, ec)) {
        throw OptionError("--out", "'" + dir + "' holds results already (" + name + "): choose another directory");
      }
    }
  }
  try {
    check_writable_dir(dir);
  } catch (const ValueError& e) {
    throw OptionError("--out", e.what());
  }
}

// The points of a round that `wanted` asks for, in the sweep's order (single first, as its
// speedups pair with it).
std::vector<Point> round_points(const SweepConfig& c, const Wanted& wanted) {
  std::vector<Point> points;
  for (const SweepRun& r : expand(c, 1)) {
    if (!wanted || wanted->count(r.point)) points.push_back(r.point);
  }
  return points;
}

// One build's run of `point` in round `round`: a sweep pass of that one run into its file.
int run_pass(const AbOptions& o, char build, int round, const Point& point) {
  SweepOptions so = pass_options(o, build, round + 1);
  so.progress_label = std::string(1, build);
  so.only = [round, point](const SweepRun& r) { return r.repeat == round && r.point == point; };
  return run_sweep(so);
}

// One build's file of the session, read as `dpscale report` reads a file: the reader's warnings
// (a cut-off line skipped, a duplicate) said on stderr, and a file with no runs refused, as
// `dpscale compare` refuses it.
ResultsFile read_session_file(const std::string& path) {
  ResultsFile f = read_results(path);
  for (const std::string& w : f.warnings) std::cerr << "dpscale: warning: " << w << "\n";
  refuse_no_runs(f);
  return f;
}

}  // namespace

bool a_leads(int round) { return (round / 2 + round) % 2 == 0; }

int rounds_after_undecided(int done, int max_rounds) { return std::min(max_rounds, done + 2); }

SweepConfig load_ab_config(const std::string& path) {
  SweepConfig c = load_config(path);
  if (std::find(c.modes.begin(), c.modes.end(), Mode::single) == c.modes.end()) {
    throw InputError(path + ": \"modes\" has no single-device mode ('single'): dpscale ab measures each "
                            "build's speedups over its own single runs");
  }
  return c;
}

void check_ab_inputs(AbOptions& o) {
  const SweepConfig c = load_ab_config(o.config_path);
  std::error_code ec;
  if (fs::equivalent(o.a_dir, o.b_dir, ec)) {
    throw OptionError("--b", "is the same directory as --a: an A/A check compares two copies of one build");
  }
  check_trainers("--a", o.a_dir, c);
  check_trainers("--b", o.b_dir, c);
  if (o.max_rounds < o.rounds) {
    throw OptionError("--max-rounds", "must be at least --rounds (" + std::to_string(o.rounds) + "; got " +
                                          std::to_string(o.max_rounds) + ")");
  }
  if (o.out_dir.empty()) o.out_dir = "results/ab-" + c.name + "-" + utc_now("%Y%m%d-%H%M%S");
  check_out_dir(o.out_dir);
  check_gate_script(o.gate);
  for (const char build : {'A', 'B'}) check_sweep_inputs(pass_options(o, build, o.max_rounds));
}

int run_ab(AbOptions o) {
  const GateResult r = run_ab_session(std::move(o));
  std::cout << r.text << std::flush;
  return r.exit_code;
}

// A session's files judged again as they stand (--judge DIR): the same document and statistics
// as at the session's end, for another minimum effect or after a change of the rule.
GateResult judge_finished(const AbOptions& o) {
  load_ab_config(o.config_path);
  for (const char* f : {"a.jsonl", "b.jsonl"}) {
    if (!fs::is_regular_file(fs::path(o.judge_dir) / f)) {
      throw OptionError("--judge", o.judge_dir + " holds no " + f + ": not a dpscale ab session's --out");
    }
  }
  check_gate_script(o.gate);
  const ResultsFile a = read_session_file((fs::path(o.judge_dir) / "a.jsonl").string());
  const ResultsFile b = read_session_file((fs::path(o.judge_dir) / "b.jsonl").string());
  int rounds = 0;
  for (const SweepEntry& e : b.entries) rounds = std::max(rounds, e.repeat + 1);
  // A --share-gpu run is a correctness run, as compare refuses it; a live session's own runs
  // are whatever its config asked for.
  for (const ResultsFile* f : {&a, &b}) refuse_gpu_shared(*f, "dpscale ab");
  const AbLabels labels{o.a_dir, o.b_dir, rounds};
  check_judgeable(a, b, labels);
  return judge_document(ab_document(a, b, o.gate, labels), o.gate);
}

GateResult run_ab_session(AbOptions o) {
  // A pair of runs both disturbed by their ranks' run delay alike still judges when the
  // contention can move their ratio by at most half the minimum effect (machine_state.h:
  // lost_alike; docs/regression-gate.md, "A pair whose halves lost alike": why that is sound).
  o.gate.limits.alike_run_delay = o.gate.min_effect / 2;
  if (!o.judge_dir.empty()) return judge_finished(o);
  check_ab_inputs(o);
  fs::create_directories(o.out_dir);
  std::cerr << "# dpscale ab: A = " << o.a_dir << ", B = " << o.b_dir << "; results in " << o.out_dir << std::endl;
  SweepConfig config = load_ab_config(o.config_path);
  apply_overrides(config, o.sweep);  // as every pass applies them
  const SessionDilation dilation = fix_session_dilation(config);
  o.sweep.link_dilation_at = dilation.at;
  if (!dilation.line.empty()) std::cerr << "# dpscale ab: " << dilation.line << std::endl;
  // One machine watch for every pass: a run's probe after is the next run's probe before, as in
  // a sweep, instead of a probe more per run, and each run is judged against the session's probes.
  o.sweep.session = std::make_shared<SweepSession>();
  Progress& progress = o.sweep.session->progress.emplace(std::vector<double>{});  // the session counts its runs
  Wanted wanted;
  int done = 0, target = o.rounds;
  for (;;) {
    const std::vector<Point> points = round_points(config, wanted);  // every round of this block
    // The session's count of runs (the progress lines, their time left) grows by the rounds to run.
    std::vector<double> planned;
    for (int r = done; r < target; ++r) {
      for (const Point& point : points) planned.insert(planned.end(), 2, model_weight(point.model));
    }
    progress.add(planned);
    for (int r = done; r < target; ++r) {
      const char first = a_leads(r) ? 'A' : 'B', second = first == 'A' ? 'B' : 'A';
      std::cerr << "# dpscale ab: round " << r + 1 << " of " << target << ", each point by " << first << " then "
                << second << std::endl;
      for (const Point& point : points) {
        for (const char build : {first, second}) {
          if (run_pass(o, build, r, point) == 130) {
            std::cerr << "dpscale ab: interrupted in round " << r + 1 << std::endl;
            GateResult interrupted;
            interrupted.exit_code = 130;
            return interrupted;
          }
        }
      }
    }
    done = target;
    const ResultsFile a = read_session_file(file_of(o, 'A')), b = read_session_file(file_of(o, 'B'));
    const AbLabels labels{o.a_dir, o.b_dir, done};
    check_judgeable(a, b, labels);  // a build whose every run failed ends the session here, with its reason
    nlohmann::json doc = ab_document(a, b, o.gate, labels);
    if (!dilation.line.empty()) doc["notes"].push_back(dilation.line);
    const bool last = done >= o.max_rounds;
    if (last) {
      doc["footer"] = {std::to_string(done) + " rounds, the most --max-rounds allows: a point still undecided stays "
                                              "undecided (exit 3), it is not called the same"};
    }
    GateResult r = judge_document(std::move(doc), o.gate);
    if (r.exit_code != 3 || last || r.undecided.empty()) return r;
    wanted = blocks_of(r.undecided);
    target = rounds_after_undecided(done, o.max_rounds);
    std::cerr << "# dpscale ab: undecided at " << describe_points(r.undecided) << ": rounds " << done + 1 << "-" << target
              << " of them (at most " << o.max_rounds << ", --max-rounds)" << std::endl;
  }
}

}  // namespace dpscale
