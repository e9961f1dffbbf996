// predict_args.h — `dpscale predict`'s options, each a typed value that CLI11 parses and checks
// as every dpscale option is (its kind from harness/common/cli_values.h, on the contract's checked
// parsers or this folder's: --single, --fit-comm, --modes): a bad value is one line naming its
// flag, exit 2, before anything runs.
// What a value means for the others (a K above the batch, a link given twice) is checked where
// the prediction is set up (predict_setup.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "contract/trainer_options.h"
#include "textbook.h"

namespace dpscale::predict {

struct PredictArgs {
  // --textbook LISTING and its inputs: the book's values unless given.
  std::string textbook;
  Sim1591 book1591;
  Sim1521 book1521;
  // The step model: where the single-device epochs come from, what to predict.
  std::string from, single, calibrate, validate, validate_caps;
  std::vector<std::string> models, modes, fit_modes;
  std::vector<int> world_sizes;  // empty: the default of what runs
  int64_t samples = 0;           // 0: the single runs'
  int batch_size = 0;            // 0: the single runs'
  int seq_len = 0;               // a transformer's tokens per sample; 0: the single runs'
  int cores = -1;                // -1: the calibration's machine
  double bucket_cap_mb = TrainOptions{}.bucket_cap_mb;  // the trainers' defaults and checks
  double first_bucket_mb = TrainOptions{}.first_bucket_mb;
  int shard_stage = TrainOptions{}.shard_stage;        // --modes sharded: which stage
  int prefetch_units = TrainOptions{}.prefetch_units;  // --modes sharded, stage 3
  bool fused = false, recommend_cap = false, recommend = false;
  // The link.
  std::string link, link_from, link_from_algo = "native", fit_comm, fit_step, link_dilation = "1", algo = "ring",
                                 intra_link;
  int gpus_per_node = 8;
  std::string format = "md";
};

// Adds every option to `cmd`, writing into `a`.
void add_predict_options(CLI::App& cmd, PredictArgs& a);

}  // namespace dpscale::predict
