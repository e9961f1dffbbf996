// recommend.h — `dpscale predict --recommend`: for each model and K on the given link (and the
// calibration's machine terms, when given), the step model's answer to the three questions a
// user tunes: which mode and bucket cap, whether 2-byte gradients pay, whether accumulation pays.
//
//   setup          the fastest predicted of naive, interleaved and bucketed at the advised cap
//                  (recommend_cap.h: the largest cap of the flat range)
//   2-byte grads   the same setup with every all-reduce carrying half the bytes (--grad-comm bf16
//                  or fp16); the conversions' cost and the effect on the loss are not predicted
//                  (docs/predict/README.md says where they were measured)
//   accumulation   the same setup at --accum-steps 2, 4, 8: one all-reduce per A micro-batches
//                  (the optimizer sees A·B samples a step: it changes the training, not only
//                  the speed)
// Gain = predicted epoch without / with − 1. An option "pays" when its gain is at least 3% (the
// tolerance the cap advice is held to).
#pragma once

#include <string>
#include <vector>

#include "predict_table.h"

namespace dpscale::predict {

inline constexpr double kPaysAbove = 0.03;

struct Recommendation {
  std::string model;
  int world_size = 0;
  Mode mode = Mode::bucketed;
  double cap_mb = 0;              // bucketed only
  double epoch_s = 0, speedup = 0;
  double two_byte_gain = 0;       // epoch fp32 / epoch 2-byte − 1
  int best_accum = 1;             // the A of 2, 4, 8 with the largest gain
  double accum_gain = 0;
};

std::vector<Recommendation> recommend(const std::vector<SingleRun>& singles, const PredictContext& ctx,
                                      const std::vector<int>& world_sizes);
std::string render_recommendations(const std::vector<Recommendation>& recs, const PredictContext& ctx,
                                   const std::string& format);

}  // namespace dpscale::predict
