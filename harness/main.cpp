// main.cpp — the `dpscale` command: sweep, report, compare, plot.
//
//   dpscale sweep configs/cpu.json [--out results/x.jsonl] [--resume] [--dry-run] [--repeats N]
//   dpscale report results/x.jsonl [--format md|csv|json]
//   dpscale compare results/new.jsonl results/baselines/ci-cpu.jsonl   the regression gate (gate.h)
//   dpscale compare NEW --baseline DIR [--rerun CONFIG] [--format md|json] [--min-effect 3]
//   dpscale compare NEW BASE --tolerance 0.25 [--absolute]           the crude mode (compare.h)
//   dpscale plot results/x.jsonl --out plots/out
//   dpscale predict ...                 (harness/predict/predict_main.h)
//   dpscale schema [--format md|json] [--table fields|options|links]
//                                       md: one table (the record's fields in docs/record.md, the
//                                       trainer options in the README, the link presets in
//                                       docs/link-emulation.md); json: modes, options and fields
//
// Exit status: 0 fine; 1 a regression (compare), failed runs (sweep) or an internal error;
// 2 bad input (options, config, results file), with one line on stderr naming what is wrong;
// 3 (compare) nothing regressed but some point is undecided.
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "contract/cli_checks.h"
#include "contract/option_values.h"
#include "contract/link_model.h"
#include "contract/schema_doc.h"
#include "contract/trainer_options.h"
#include "harness/report/analysis.h"
#include "harness/report/compare.h"
#include "harness/sweep/config.h"
#include "harness/report/gate.h"
#include "harness/report/plot.h"
#include "harness/predict/predict_main.h"
#include "harness/report/report.h"
#include "harness/report/diagnosis_report.h"
#include "harness/sweep/sweep.h"
#include "core/errors.h"

namespace {

using namespace dpscale;

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// Reads a results file, printing its warnings (truncated lines) to stderr.
Analysis load(const std::string& path) {
  const ResultsFile f = read_results(path);
  for (const std::string& w : f.warnings) std::cerr << "dpscale: warning: " << w << "\n";
  if (f.entries.empty()) throw InputError(path + ": no runs in the file");
  return analyse(f);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dpscale: run data-parallel training sweeps, report and compare scaling curves, draw charts.",
               "dpscale"};
  app.require_subcommand(1);
  app.get_formatter()->column_width(34);

  SweepOptions so;
  std::string mpirun_args;
  auto* sweep = app.add_subcommand("sweep", "run every point of a config, one JSONL line per finished run");
  sweep->add_option("config", so.config_path, "sweep config (configs/*.json)")->required();
  sweep->add_option("--out", so.out_path, "results file (default results/<config>-<UTC time>.jsonl)");
  sweep->add_flag("--resume", so.resume, "continue --out: skip runs it already holds as ok");
  sweep->add_flag("--dry-run", so.dry_run, "print each run's command line and exit");
  sweep->add_option("--repeats", so.repeats, "run every point N times (default: the config's)")->check(whole_in(1, kMaxRepeats));
  sweep->add_option("--timeout", so.timeout_s, "per-run limit in seconds (default: the config's)")
      ->check(real_in({0.0, false}, {kMaxTimeoutS}, "above 0 up to " + format_number(kMaxTimeoutS) + " s"));
  sweep->add_option("--backend", so.backend, "override the config's backend")->check(CLI::IsMember(option("backend").choices));
  sweep->add_option("--max-world-size", so.max_world_size, "leave out points with more ranks than this")
      ->check(whole_in(1, kMaxWorldSize));
  so.launch.launcher = "";  // auto: srun inside a Slurm allocation, else mpirun (resolve_launcher)
  sweep->add_option("--launcher", so.launch.launcher,
                    "mpirun | srun | none (default: srun inside a Slurm allocation, else mpirun; none: every run "
                    "starts directly)")
      ->check(CLI::IsMember({"mpirun", "srun", "none"}));
  sweep->add_option("--mpirun", so.launch.mpirun, "the mpirun executable")->capture_default_str();
  sweep->add_option("--mpirun-args", mpirun_args, "extra mpirun arguments, split on spaces (no shell)");
  sweep->add_option("--hostfile", so.launch.hostfile, "mpirun --hostfile for multi-node sweeps");
  std::string srun_args;
  sweep->add_option("--srun-args", srun_args, "extra srun arguments for every job step, split on spaces (no shell)");
  sweep->add_option("--bind-to", so.launch.bind_to, "Open MPI --bind-to (none | core | socket ...)")->capture_default_str();
  sweep->add_option("--bin-dir", so.bin_dir, "where the train_* executables are (default: next to dpscale)");
  sweep->add_option("--probe-seconds", so.probe_s, "the GEMM probe between runs (0: none; the machine's state is still recorded)")
      ->check(real_in({0.0}, {10.0}, "in [0, 10]"))
      ->capture_default_str();
  sweep->add_option("--nice", so.nice, "run the sweep at this nice value (-20..19; negative needs root)")
      ->check(whole_in(-20, 19))
      ->capture_default_str();
  sweep->add_option("--disturbed-reruns", so.disturbed_reruns, "run a run the machine disturbed again, at most N times")
      ->check(whole_in(0, 10))
      ->capture_default_str();

  std::string report_file, format = "md";
  auto* report = app.add_subcommand("report", "the workshop's results table with E, comm %, γ and the Amdahl ceiling");
  report->add_option("file", report_file, "results file (.jsonl)")->required();
  report->add_option("--format", format, "md | csv | json")->capture_default_str();
  std::string bench_allreduce_json;  // --bench-allreduce: bench_allreduce's JSON beside the report
  report->add_option("--bench-allreduce", bench_allreduce_json,
                     "bench_allreduce's JSON: put its bus bandwidth beside each all-reduce's in training (md)");

  std::string now_file, base_file, base_dir;
  CompareOptions co;
  GateOptions go;
  RerunOptions rr;
  double min_effect_pct = 100.0 * kGateMinEffect;
  auto* cmp = app.add_subcommand("compare",
                                 "the regression gate: exit 1 when a scaling curve regressed against a baseline, "
                                 "3 when some point is undecided");
  cmp->add_option("new", now_file, "new results file")->required();
  cmp->add_option("baseline", base_file, "baseline results file (or --baseline DIR)");
  cmp->add_option("--baseline", base_dir, "a directory of accepted results files from this machine, pooled");
  cmp->add_option("--alpha", go.alpha, "significance level, family-wise over each curve (Holm)")
      ->check(real_in({0.0, false}, {0.5}, "in (0, 0.5]"))
      ->capture_default_str();
  cmp->add_option("--min-effect", min_effect_pct, "the smallest change of speedup, in percent, that counts")
      ->check(real_in({0.0, false}, {100.0}, "in (0, 100]"))
      ->capture_default_str();
  cmp->add_option("--format", go.format, "md | json")->check(CLI::IsMember({"md", "json"}))->capture_default_str();
  cmp->add_option("--rerun", rr.config, "add rounds of undecided points to NEW with this config, then judge again");
  cmp->add_option("--max-repeats", rr.max_repeats, "--rerun stops at this many rounds (default: twice NEW's)")
      ->check(whole_in(1, kMaxRepeats));
  cmp->add_option("--python", go.python, "Python 3 with scipy")->capture_default_str();
  cmp->add_option("--gate-script", go.script, "the statistics (default <source>/harness/report/gate.py)");
  auto* tol = cmp->add_option("--tolerance", co.tolerance,
                              "the crude mode: allowed fall of median speedup/efficiency (relative) and rise of "
                              "comm fraction (absolute)")
      // The contract's checked parse: CLI11's Range lets NaN through (every comparison is false).
      ->check([](const std::string& v) {
        try {
          parse_real(v, {0.0}, {1.0});
          return std::string();
        } catch (const ValueError& e) {
          return std::string(e.what());
        }
      });
  cmp->add_flag("--absolute", co.absolute, "the crude mode, throughput too (only meaningful on the same machine)");

  PlotOptions po;
  auto* plot = app.add_subcommand("plot", "draw the charts (PNG + SVG) with plots/plot_results.py");
  plot->add_option("file", po.results, "results file (.jsonl)")->required();
  plot->add_option("--out", po.out_dir, "output directory")->capture_default_str();
  plot->add_option("--python", po.python, "Python with matplotlib")->capture_default_str();
  plot->add_option("--format", po.formats, "chart formats, of png, svg, pdf (default png,svg)");
  plot->add_option("--script", po.script, "the plotter (default <source>/plots/plot_results.py)");

  std::string schema_format = "md", schema_table = "fields";
  auto* schema = app.add_subcommand("schema", "the contract: one table as Markdown (md), or modes, options and fields (json)");
  schema->add_option("--format", schema_format, "md | json")->check(CLI::IsMember({"md", "json"}))->capture_default_str();
  schema->add_option("--table", schema_table, "md: fields (the record's) | options (the trainers') | links (--link presets)")
      ->check(CLI::IsMember({"fields", "options", "links"}))
      ->capture_default_str();

  const auto predict = predict::add_predict_command(app);  // all of it in harness/predict/

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

  try {
    if (*sweep) {
      so.launch.mpirun_args = split_words(mpirun_args);
      so.launch.srun_args = split_words(srun_args);
      return run_sweep(so);
    }
    if (*report) {
      const Analysis analysis = load(report_file);
      std::string text = render_report(analysis, report_file, format);
      if (!bench_allreduce_json.empty()) {
        if (format != "md") throw InputError("--bench-allreduce goes with --format md");
        text += bench_comparison_markdown(analysis, bench_allreduce_json);
      }
      std::cout << text << std::flush;
      return 0;
    }
    if (*cmp) {
      if (tol->count() || co.absolute) {
        if (base_file.empty()) throw InputError("the crude mode (--tolerance, --absolute) compares NEW with one BASELINE file");
        const Analysis now = load(now_file), base = load(base_file);
        const Comparison c = compare(now, base, co);
        std::cout << render_comparison(c, co, now_file, base_file) << std::flush;
        return c.failed() ? 1 : 0;
      }
      if (!base_file.empty() && !base_dir.empty()) throw InputError("give BASELINE.jsonl or --baseline DIR, not both");
      go.min_effect = min_effect_pct / 100.0;
      GateFiles files = load_gate_files(now_file, base_file, base_dir);
      for (const ResultsFile* f : {&files.now}) {
        for (const std::string& w : f->warnings) std::cerr << "dpscale: warning: " << w << "\n";
      }
      for (const ResultsFile& f : files.bases) {
        for (const std::string& w : f.warnings) std::cerr << "dpscale: warning: " << w << "\n";
      }
      const GateResult r = run_gate_with_reruns(files, go, rr);
      std::cout << r.text << std::flush;
      return r.exit_code;
    }
    if (*plot) return run_plot(po);
    if (predict->chosen()) return predict->run();
    if (*schema) {
      std::cout << (schema_format == "json"        ? contract_json().dump(2) + "\n"
                    : schema_table == "options" ? trainer_options_markdown()
                    : schema_table == "links"   ? link_presets_markdown()
                                                : record_fields_markdown())
                << std::flush;
      return 0;
    }
  } catch (const InputError& e) {
    std::cerr << "dpscale: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dpscale: error: " << e.what() << std::endl;
    return 1;
  }
  return 2;
}
