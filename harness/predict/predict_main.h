// predict_main.h — the `dpscale predict` subcommand: its options and what it runs. main.cpp adds it
// with add_predict_command() and, when chosen, calls run(); everything else is in this folder.
//
//   dpscale predict --textbook 15.9.1 [--params 1e9 --bytes-per-param 2 --global-batch 8192
//                   --flops-per-example 6e9 --device-tflops 60 --net-gbps 25
//                   --loader-samples-per-s 12000 --world-sizes 1,2,...,256]
//   dpscale predict --textbook 15.2.1 [--params 1e9 --bytes-per-param 2 --world-size 8
//                   --compute-ms 250 --intra-link 1:300 --inter-link 5:12.5]
//   dpscale predict --from RESULTS.jsonl | --single small=0.0361,...  [--link L | --link-from BENCH.json]
//                   [--link-dilation F|auto:TFLOPS] [--algo ring|star|hier] [--modes ...]
//                   [--world-sizes ...] [--bucket-cap-mb 25] [--format md|csv|json]
//   dpscale predict --validate RESULTS.jsonl [--format ...]
//   dpscale predict --recommend-cap --from ... | --single ... [--world-sizes 2] [--link ...]
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace dpscale::predict {

struct PredictArgs;

class PredictCommand {
 public:
  explicit PredictCommand(CLI::App& app);
  ~PredictCommand();
  bool chosen() const { return cmd_->parsed(); }
  // Exit status; throws InputError (exit 2, one line) for bad input.
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<PredictArgs> a_;
};

std::unique_ptr<PredictCommand> add_predict_command(CLI::App& app);

}  // namespace dpscale::predict
