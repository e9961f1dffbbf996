// predict_setup.h — from `dpscale predict`'s options (predict_args.h) to what the step model
// runs on: the single-device epochs and their workload, the modes and world sizes, the sync,
// the link and its dilation, the machine terms. What the options mean for each other is checked
// here (exactly one source of single-device epochs, one of --link, --link-from and --fit-comm,
// a K within the batch), one line each, exit 2.
#pragma once

#include <optional>
#include <vector>

#include "machine_fit.h"
#include "predict_args.h"
#include "predict_table.h"

namespace dpscale::predict {

// --calibrate's fit of this machine's terms (with --fit-modes, --cores); nullopt without it.
std::optional<Calibration> calibration_of(const PredictArgs& a);

struct PredictSetup {
  std::vector<SingleRun> singles;
  PredictContext ctx;
  std::vector<Mode> modes;
  std::vector<int> world_sizes;
};

// `dilation_given`: --link-dilation was on the command line (its default does not replace a
// results file's own dilation).
PredictSetup set_up_prediction(const PredictArgs& a, const std::optional<Calibration>& cal, bool dilation_given);

}  // namespace dpscale::predict
