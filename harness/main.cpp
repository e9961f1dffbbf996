// main.cpp — the `dpscale` command: sweep, report, compare, ab, bisect, plot, predict, history, schema.
// The options of every subcommand are in cli.cpp (each checked as argv is parsed); this file runs
// the chosen one.
//
//   dpscale sweep configs/cpu.json [--out results/x.jsonl] [--resume] [--dry-run] [--repeats N]
//   dpscale report results/x.jsonl [--format md|csv|json]
//   dpscale compare results/new.jsonl .ci/baseline/ci-cpu.jsonl   the regression gate (gate.h)
//   dpscale compare NEW --baseline DIR [--rerun CONFIG] [--format md|json] [--min-effect 3]
//   dpscale compare NEW BASE --tolerance 0.25 [--absolute]           the crude mode (compare.h)
//   dpscale ab configs/ci.json --a BASE/bin --b build/bin [--min-effect 5] [--out DIR]
//                                       two builds in one session (harness/ab/ab.h)
//   dpscale bisect GOOD BAD configs/bisect.json [--work DIR] [--repo DIR]
//                                       the first revision whose curve moved (harness/bisect/bisect.h)
//   dpscale plot results/x.jsonl --out plots/out
//   dpscale predict ...                 (harness/predict/predict_main.h)
//   dpscale history add|show|changes|html|export|import ...   (harness/history/history_main.h)
//   dpscale schema [--format md|json] [--table fields|options|links|point]
//                                       md: one table (the record's fields in docs/record.md, the
//                                       trainer options in docs/trainers.md, the link presets in
//                                       docs/link-emulation.md, the point's fields in
//                                       docs/RESULTS_FORMAT.md); json: modes, options, fields and
//                                       the point's JSON Schema
//
// Exit status: 0 fine; 1 a regression (compare, ab, history changes), failed runs (sweep) or an
// internal error; 2 bad input (options, config, results file), with one line on stderr naming
// what is wrong; 3 (compare, ab) nothing regressed but some point is undecided, (bisect) no
// revision named; 4 (history) its Python side failed.
#include <iostream>

#include "contract/link_model.h"
#include "contract/schema_doc.h"
#include "contract/trainer_options.h"
#include "core/errors.h"
#include "harness/cli.h"
#include "harness/point/point.h"
#include "harness/report/analysis.h"
#include "harness/report/diagnosis_report.h"
#include "harness/report/report.h"

namespace {

using namespace dpscale;

// Reads a results file, printing its warnings (truncated lines) to stderr.
// `what` names the command in the refusal of a --share-gpu file.
Analysis load(const std::string& path, const std::string& what) {
  const ResultsFile f = read_results(path);
  for (const std::string& w : f.warnings) std::cerr << "dpscale: warning: " << w << "\n";
  if (f.entries.empty()) throw InputError(path + ": no runs in the file");
  refuse_gpu_shared(f, what);
  return analyse(f);
}

int run_report(const DpscaleCli& c) {
  const Analysis analysis = load(c.report_file, "dpscale report");
  std::string text = render_report(analysis, c.report_file, c.report_format);
  if (!c.bench_allreduce_json.empty()) {
    if (c.report_format != "md") throw InputError("--bench-allreduce goes with --format md");
    text += bench_comparison_markdown(analysis, c.bench_allreduce_json);
  }
  std::cout << text << std::flush;
  return 0;
}

int run_compare(DpscaleCli& c) {
  if (c.tolerance->count() || c.crude.absolute) {
    if (c.base_file.empty()) throw InputError("the crude mode (--tolerance, --absolute) compares NEW with one BASELINE file");
    const Analysis now = load(c.now_file, "dpscale compare"), base = load(c.base_file, "dpscale compare");
    const Comparison cmp = compare(now, base, c.crude);
    std::cout << render_comparison(cmp, c.crude, c.now_file, c.base_file) << std::flush;
    return cmp.failed() ? 1 : 0;
  }
  if (!c.base_file.empty() && !c.base_dir.empty()) throw InputError("give BASELINE.jsonl or --baseline DIR, not both");
  c.gate.min_effect = c.min_effect_pct / 100.0;
  GateFiles files = load_gate_files(c.now_file, c.base_file, c.base_dir);
  for (const std::string& w : files.now.warnings) std::cerr << "dpscale: warning: " << w << "\n";
  for (const ResultsFile& f : files.bases) {
    for (const std::string& w : f.warnings) std::cerr << "dpscale: warning: " << w << "\n";
  }
  const GateResult r = run_gate_with_reruns(files, c.gate, c.rerun);
  std::cout << r.text << std::flush;
  return r.exit_code;
}

int run_schema(const DpscaleCli& c) {
  nlohmann::ordered_json contract = contract_json();
  contract["point"] = point_schema();
  std::cout << (c.schema_format == "json"        ? contract.dump(2) + "\n"
                : c.schema_table == "options" ? trainer_options_markdown()
                : c.schema_table == "links"   ? link_presets_markdown()
                : c.schema_table == "point"   ? point_fields_markdown()
                                              : record_fields_markdown())
            << std::flush;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  DpscaleCli cli;
  if (const std::optional<int> decided = cli.parse(argc, argv)) return *decided;
  try {
    if (*cli.sweep) return run_sweep(cli.sweep_options);
    if (*cli.report) return run_report(cli);
    if (*cli.compare) return run_compare(cli);
    if (*cli.ab) {
      cli.ab_options.gate.min_effect = cli.ab_min_effect_pct / 100.0;
      return run_ab(cli.ab_options);
    }
    if (*cli.bisect) {
      cli.bisect_options.ab.gate.min_effect = cli.bisect_min_effect_pct / 100.0;
      return bisect::run_bisect(cli.bisect_options);
    }
    if (*cli.plot) return run_plot(cli.plot_options);
    if (cli.predict->chosen()) return cli.predict->run();
    if (cli.history->chosen()) return cli.history->run();
    if (*cli.schema) return run_schema(cli);
  } catch (const InputError& e) {
    std::cerr << "dpscale: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dpscale: error: " << e.what() << std::endl;
    return 1;
  }
  return 2;
}
