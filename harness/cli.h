// cli.h — the `dpscale` command line: every subcommand with every option, built in one place.
// main.cpp parses argv with it and runs the chosen subcommand; tests/harness/test_bad_input.cpp
// builds the same app to walk every option of every subcommand with a value it must refuse.
//
// Every option that takes a value has a kind (harness/common/cli_values.h) that --help prints and
// that is checked as the command line is parsed, before anything is read, made or run.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "harness/ab/ab.h"
#include "harness/bisect/bisect.h"
#include "harness/history/history_main.h"
#include "harness/predict/predict_main.h"
#include "harness/report/compare.h"
#include "harness/report/gate.h"
#include "harness/report/plot.h"
#include "harness/sweep/sweep.h"

namespace dpscale {

struct DpscaleCli {
  CLI::App app{"dpscale: run data-parallel training sweeps, report and compare scaling curves, draw charts.", "dpscale"};
  CLI::App *sweep = nullptr, *report = nullptr, *compare = nullptr, *ab = nullptr, *bisect = nullptr, *plot = nullptr, *schema = nullptr;

  // sweep
  SweepOptions sweep_options;
  std::string mpirun_args, srun_args;  // split on spaces after parsing
  // report
  std::string report_file, report_format = "md", bench_allreduce_json;
  // compare: the gate, or the crude mode (--tolerance, --absolute)
  std::string now_file, base_file, base_dir;
  CompareOptions crude;
  GateOptions gate;
  RerunOptions rerun;
  double min_effect_pct = 100.0 * kGateMinEffect;  // --min-effect is in percent
  CLI::Option* tolerance = nullptr;
  // ab: two builds in one session
  AbOptions ab_options;
  double ab_min_effect_pct = 100.0 * kGateMinEffect;  // --min-effect is in percent
  // bisect: the first revision whose curve moved, on ab's sessions
  bisect::BisectOptions bisect_options;
  double bisect_min_effect_pct = 100.0 * kGateMinEffect;  // --min-effect is in percent
  // plot
  PlotOptions plot_options;
  // schema
  std::string schema_format = "md", schema_table = "fields";
  // predict: its options and its run live in harness/predict/
  std::unique_ptr<predict::PredictCommand> predict;
  // history: its subcommands, their options and their runs live in harness/history/
  std::unique_ptr<history::HistoryCommand> history;

  DpscaleCli();
  DpscaleCli(const DpscaleCli&) = delete;
  DpscaleCli& operator=(const DpscaleCli&) = delete;

  // Parses argv. Returns the exit status when parsing decides it — 0 after --help, 2 after one
  // line naming a bad option — else nullopt (run the chosen subcommand).
  std::optional<int> parse(int argc, char** argv);
};

}  // namespace dpscale
