// cli.cpp — dpscale's subcommands and their options (cli.h), each with its kind and check.
#include "harness/cli.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "contract/option_paths.h"
#include "contract/trainer_options.h"
#include "harness/common/cli_values.h"
#include "harness/sweep/capacity.h"

namespace dpscale {

namespace {

// The flags the sweep gives every run itself: extra launcher arguments must not set them too.
const std::vector<std::string> kMpirunOwn = {"-np", "-n", "--np", "-c", "--hostfile", "-hostfile", "--machinefile",
                                             "-machinefile", "--npernode", "-npernode"};
const std::vector<std::string> kSrunOwn = {"-n", "--ntasks", "-N", "--nodes", "--ntasks-per-node", "--mpi",
                                           "--kill-on-bad-exit"};
// Open MPI's --bind-to targets; a value may add qualifiers after a colon (core:overload-allowed).
const std::vector<std::string> kBindTargets = {"none", "hwthread", "core", "l1cache", "l2cache", "l3cache",
                                               "socket", "numa", "board"};

// A hostfile that Open MPI would refuse, or read as hosts it cannot reach, is refused now with
// its line, not found when the first data-parallel run fails.
void check_hostfile(const std::string& path) {
  check_readable_file(path);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  hostfile_capacity(ss.str(), path);
}

// The files a subcommand reads first thing (a config, a results file, a plotter) are only named
// FILE here (kind_only): the subcommand opens them before anything else, in its own words
// ("x.jsonl: cannot read the results file"), so those words stay one for every way of failing.

void add_sweep(DpscaleCli& c) {
  SweepOptions& so = c.sweep_options;
  CLI::App* s = c.sweep = c.app.add_subcommand("sweep", "run every point of a config, one JSONL line per finished run");
  kind_only(s->add_option("config", so.config_path, "sweep config (configs/*.json)")->required(), "FILE");
  output_file(s->add_option("--out", so.out_path, "results file (default results/<config>-<UTC time>.jsonl)"));
  s->add_flag("--resume", so.resume, "continue --out: skip runs it already holds as ok");
  s->add_flag("--dry-run", so.dry_run, "print each run's command line and exit");
  whole_in(s->add_option("--repeats", so.repeats, "run every point N times (default: the config's)"), 1, kMaxRepeats);
  real_in(s->add_option("--timeout", so.timeout_s, "per-run limit in seconds (default: the config's)"), {0.0, false},
          {kMaxTimeoutS});
  one_of(s->add_option("--backend", so.backend, "override the config's backend"), option("backend").choices);
  whole_in(s->add_option("--max-world-size", so.max_world_size, "leave out points with more ranks than this"), 1,
           kMaxWorldSize);
  so.launch.launcher = "";  // auto: srun inside a Slurm allocation, else mpirun (resolve_launcher)
  one_of(s->add_option("--launcher", so.launch.launcher,
                       "mpirun | srun | none (default: srun inside a Slurm allocation, else mpirun; none: every run "
                       "starts directly)"),
         {"mpirun", "srun", "none"});
  program(s->add_option("--mpirun", so.launch.mpirun, "the mpirun executable")->capture_default_str());
  launcher_args(s->add_option("--mpirun-args", c.mpirun_args, "extra mpirun arguments, split on spaces (no shell)"),
                kMpirunOwn);
  text_of(s->add_option("--hostfile", so.launch.hostfile, "mpirun --hostfile for multi-node sweeps"), "FILE",
          check_hostfile);
  launcher_args(s->add_option("--srun-args", c.srun_args, "extra srun arguments for every job step, split on spaces (no shell)"),
                kSrunOwn);
  text_of(s->add_option("--bind-to", so.launch.bind_to, "Open MPI --bind-to (none | core | socket ...)")->capture_default_str(),
          "{none,hwthread,core,l1cache,l2cache,l3cache,socket,numa,board}[:QUALIFIERS]",
          [](const std::string& v) { parse_choice(v.substr(0, v.find(':')), kBindTargets, "--bind-to target"); });
  // Checked with the trainers in it (plan_sweep), not here: a dry run prints the command lines
  // of a bin dir that may exist only on the machine that will run them.
  kind_only(s->add_option("--bin-dir", so.bin_dir, "where the train_* executables are (default: next to dpscale)"), "DIR");
  real_in(s->add_option("--probe-seconds", so.probe_s,
                        "the GEMM probe between runs (0: none; the machine's state is still recorded)")
              ->capture_default_str(),
          {0.0}, {10.0});
  whole_in(s->add_option("--nice", so.nice, "run the sweep at this nice value (-20..19; negative needs root)")
               ->capture_default_str(),
           -20, 19);
  whole_in(s->add_option("--disturbed-reruns", so.disturbed_reruns, "run a run the machine disturbed again, at most N times")
               ->capture_default_str(),
           0, 10);
}

void add_report(DpscaleCli& c) {
  CLI::App* r = c.report =
      c.app.add_subcommand("report", "the workshop's results table with E, comm %, γ and the Amdahl ceiling");
  kind_only(r->add_option("file", c.report_file, "results file (.jsonl)")->required(), "FILE");
  // Checked by the report (render_report) once the file is read: a file's fault is named first.
  kind_only(r->add_option("--format", c.report_format, "md | csv | json")->capture_default_str(), "{md,csv,json}");
  kind_only(r->add_option("--bench-allreduce", c.bench_allreduce_json,
                          "bench_allreduce's JSON: put its bus bandwidth beside each all-reduce's in training (md)"),
            "FILE");
}

void add_compare(DpscaleCli& c) {
  CLI::App* m = c.compare = c.app.add_subcommand(
      "compare",
      "the regression gate: exit 1 when a scaling curve regressed against a baseline, 3 when some point is undecided");
  kind_only(m->add_option("new", c.now_file, "new results file")->required(), "FILE");
  kind_only(m->add_option("baseline", c.base_file, "baseline results file (or --baseline DIR)"), "FILE");
  input_dir(m->add_option("--baseline", c.base_dir, "a directory of accepted results files from this machine, pooled"));
  real_in(m->add_option("--alpha", c.gate.alpha, "significance level, family-wise over each curve (Holm)")
              ->capture_default_str(),
          {0.0, false}, {0.5});
  real_in(m->add_option("--min-effect", c.min_effect_pct, "the smallest change of speedup, in percent, that counts")
              ->capture_default_str(),
          {0.0, false}, {100.0});
  one_of(m->add_option("--format", c.gate.format, "md | json")->capture_default_str(), {"md", "json"});
  // Its config is read and checked before the first verdict (gate.cpp), whether or not a rerun comes.
  input_file(m->add_option("--rerun", c.rerun.config, "add rounds of undecided points to NEW with this config, then judge again"));
  whole_in(m->add_option("--max-repeats", c.rerun.max_repeats, "--rerun stops at this many rounds (default: twice NEW's)"),
           1, kMaxRepeats);
  program(m->add_option("--python", c.gate.python, "Python 3 with scipy")->capture_default_str());
  input_file(m->add_option("--gate-script", c.gate.script, "the statistics (default <source>/harness/report/gate.py)"));
  // The contract's checked parse: CLI11's Range lets NaN through (every comparison is false).
  c.tolerance = real_in(m->add_option("--tolerance", c.crude.tolerance,
                                      "the crude mode: allowed fall of median speedup/efficiency (relative) and rise "
                                      "of comm fraction (absolute)"),
                        {0.0}, {1.0});
  m->add_flag("--absolute", c.crude.absolute, "the crude mode, throughput too (only meaningful on the same machine)");
}

void add_ab(DpscaleCli& c) {
  AbOptions& o = c.ab_options;
  CLI::App* a = c.ab = c.app.add_subcommand(
      "ab", "build B against build A in one session, in alternating rounds: exit 1 on a regression, 3 when undecided");
  // Read and checked by the session before any run (ab.cpp), as the sweep reads its config.
  kind_only(a->add_option("config", o.config_path, "sweep config (configs/*.json) with the single-device mode")->required(),
            "FILE");
  input_dir(a->add_option("--a", o.a_dir, "build A's trainers (a build's bin/): the reference")->required());
  input_dir(a->add_option("--b", o.b_dir, "build B's trainers: the build judged")->required());
  whole_in(a->add_option("--rounds", o.rounds, "rounds of every point to start with (A B B A, B A A B, ...)")
               ->capture_default_str(),
           kGateMinSamples, kMaxRepeats);
  whole_in(a->add_option("--max-rounds", o.max_rounds, "add rounds of undecided points up to this many")
               ->capture_default_str(),
           kGateMinSamples, kMaxRepeats);
  real_in(a->add_option("--min-effect", c.ab_min_effect_pct,
                        "the smallest change of throughput or speedup, in percent, that counts")
              ->capture_default_str(),
          {0.0, false}, {100.0});
  real_in(a->add_option("--alpha", o.gate.alpha, "significance level, family-wise over each curve (Holm)")
              ->capture_default_str(),
          {0.0, false}, {0.5});
  // Checked by the session with the rest of its input (a directory that can be made, holding no results).
  output_dir(a->add_option("--out", o.out_dir, "both builds' results files, a.jsonl and b.jsonl (default results/ab-<config>-<UTC time>/)"));
  input_dir(a->add_option("--judge", o.judge_dir,
                          "judge a finished session's a.jsonl and b.jsonl in DIR again, running nothing (--a and --b label them)"));
  one_of(a->add_option("--format", o.gate.format, "md | json")->capture_default_str(), {"md", "json"});
  program(a->add_option("--python", o.gate.python, "Python 3 with scipy")->capture_default_str());
  input_file(a->add_option("--gate-script", o.gate.script, "the statistics (default <source>/harness/report/gate.py)"));
  real_in(a->add_option("--probe-seconds", o.sweep.probe_s, "the GEMM probe between runs (0: none)")->capture_default_str(),
          {0.0}, {10.0});
  whole_in(a->add_option("--nice", o.sweep.nice, "run at this nice value (-20..19; negative needs root; default: the config's)"),
           -20, 19);
  whole_in(a->add_option("--disturbed-reruns", o.sweep.disturbed_reruns, "run a run the machine disturbed again, at most N times")
               ->capture_default_str(),
           0, 10);
}

void add_bisect(DpscaleCli& c) {
  bisect::BisectOptions& o = c.bisect_options;
  CLI::App* b = c.bisect = c.app.add_subcommand(
      "bisect", "build the revisions between GOOD and BAD and A/B-test midpoints: the first revision whose curve moved");
  // Both resolved by git before any build (bisect_checks.cpp), in its words.
  kind_only(b->add_option("good", o.good, "a commit whose curves are as they should be")->required(), "COMMIT");
  kind_only(b->add_option("bad", o.bad, "a later commit whose curve moved (GOOD must be its ancestor)")->required(),
            "COMMIT");
  // Read and checked before any build, as ab reads it (load_ab_config).
  kind_only(b->add_option("config", o.config_path, "sweep config (configs/*.json) with the single-device mode")->required(),
            "FILE");
  input_dir(b->add_option("--repo", o.repo, "the repository (default: the current directory's)"));
  // Checked by the bisection before any build (a directory that can be made).
  output_dir(b->add_option("--work", o.work, "worktrees, build directories and sessions, one per commit, kept for reuse")
                 ->capture_default_str());
  whole_in(b->add_option("--rounds", o.ab.rounds, "each session's rounds to start with")->capture_default_str(),
           kGateMinSamples, kMaxRepeats);
  whole_in(b->add_option("--max-rounds", o.ab.max_rounds, "each session adds rounds of undecided points up to this many")
               ->capture_default_str(),
           kGateMinSamples, kMaxRepeats);
  real_in(b->add_option("--min-effect", c.bisect_min_effect_pct,
                        "the smallest change of throughput or speedup, in percent, that counts")
              ->capture_default_str(),
          {0.0, false}, {100.0});
  real_in(b->add_option("--alpha", o.ab.gate.alpha, "significance level, family-wise over each curve (Holm)")
              ->capture_default_str(),
          {0.0, false}, {0.5});
  one_of(b->add_option("--format", o.format, "md | json (json: the steps on stderr, the report on stdout)")
             ->capture_default_str(),
         {"md", "json"});
  whole_in(b->add_option("--jobs", o.jobs, "cmake --build -j (default: the machine's CPUs)"), 1, 256);
  b->add_flag("--dry-run", o.dry_run, "check the input, list the revisions and stop before any build");
  program(b->add_option("--python", o.ab.gate.python, "Python 3 with scipy")->capture_default_str());
  input_file(b->add_option("--gate-script", o.ab.gate.script, "the statistics (default <source>/harness/report/gate.py)"));
  real_in(b->add_option("--probe-seconds", o.ab.sweep.probe_s, "the GEMM probe between runs (0: none)")->capture_default_str(),
          {0.0}, {10.0});
  whole_in(b->add_option("--disturbed-reruns", o.ab.sweep.disturbed_reruns, "run a run the machine disturbed again, at most N times")
               ->capture_default_str(),
           0, 10);
}

void add_plot(DpscaleCli& c) {
  PlotOptions& po = c.plot_options;
  CLI::App* p = c.plot = c.app.add_subcommand("plot", "draw the charts (PNG + SVG) with plots/plot_results.py");
  kind_only(p->add_option("file", po.results, "results file (.jsonl)")->required(), "FILE");
  output_dir(p->add_option("--out", po.out_dir, "output directory")->capture_default_str());
  program(p->add_option("--python", po.python, "Python with matplotlib")->capture_default_str());
  some_of(p->add_option("--format", po.formats, "chart formats, of png, svg, pdf (default png,svg)"), {"png", "svg", "pdf"});
  kind_only(p->add_option("--script", po.script, "the plotter (default <source>/plots/plot_results.py)"), "FILE");
}

void add_schema(DpscaleCli& c) {
  CLI::App* s = c.schema =
      c.app.add_subcommand("schema", "the contract: one table as Markdown (md), or modes, options, fields and the "
                                     "point's schema (json)");
  one_of(s->add_option("--format", c.schema_format, "md | json")->capture_default_str(), {"md", "json"});
  one_of(s->add_option("--table", c.schema_table,
                       "md: fields (the record's) | options (the trainers') | links (--link presets) | point (a "
                       "point's JSON)")
             ->capture_default_str(),
         {"fields", "options", "links", "point"});
}

}  // namespace

DpscaleCli::DpscaleCli() {
  app.require_subcommand(1);
  app.get_formatter()->column_width(34);
  add_sweep(*this);
  add_report(*this);
  add_compare(*this);
  add_ab(*this);
  add_bisect(*this);
  add_plot(*this);
  add_schema(*this);
  predict = predict::add_predict_command(app);  // all of it in harness/predict/
  history = history::add_history_command(app);  // all of it in harness/history/
}

std::optional<int> DpscaleCli::parse(int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    std::cerr << "dpscale: " << msg << " (dpscale --help)" << std::endl;
    return 2;
  }
  std::istringstream mpirun(mpirun_args), srun(srun_args);
  for (std::string w; mpirun >> w;) sweep_options.launch.mpirun_args.push_back(w);
  for (std::string w; srun >> w;) sweep_options.launch.srun_args.push_back(w);
  return std::nullopt;
}

}  // namespace dpscale
