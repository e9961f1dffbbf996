// sync_factory.h — the one place a trainer's mode becomes its GradSync strategy: the four
// executables differ only in what this returns.
#pragma once

#include <memory>

#include "comm/communicator.h"
#include "contract/trainer_options.h"
#include "grad_sync.h"
#include "models/model.h"

namespace dpscale {

// The strategy of opts.mode: naive, interleaved or bucketed over `comm`; the no-op strategy
// (no communicator, nothing timed) for train_single_gpu.
// The optimizer the options ask for (--optimizer, --lr, --momentum, --weight-decay).
OptimizerConfig optimizer_config(const TrainOptions& opts);

std::unique_ptr<GradSync> make_grad_sync(const TrainOptions& opts, Model& model, Communicator* comm);

}  // namespace dpscale
