// rank_setup.h — everything one rank sets up on its own before training: options checked,
// device, dataset (on the device), model with its initial weights. No communication happens
// here, so any failure is caught before the first collective and reported by the start-up check.
#pragma once

#include <memory>
#include <string>

#include "contract/link_model.h"
#include "comm/grad_format.h"
#include "contract/trainer_options.h"
#include "models/data/dataset.h"
#include "models/device.h"
#include "models/model_spec.h"
#include "trainers/nonfinite_hook.h"

namespace dpscale {

// Where this rank sits: its rank, the world's size, and its place on its node.
struct RankPlace {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_size = 1;
  // The GPU this rank takes (gpu_choice.h, from the UUIDs its node's ranks see): its CUDA device
  // index, -1 for the local rank; a non-empty conflict refuses a data-parallel CUDA run.
  int gpu_index = -1;
  std::string gpu_conflict;
  int gpu_most_on_one = 0;  // the most local ranks on one GPU of this node (> 1: --share-gpu shared one)
};

struct RankSetup {
  TrainOptions opts;
  ModelSpec spec;
  int rank = 0, world_size = 1;
  int local_batch = 0;
  int64_t steps_per_epoch = 0;

  // The data-parallel options, parsed once here. link.dilation is the factor given; an
  // auto:TFLOPS dilation is resolved by the trainer after the ranks have met.
  LinkModel link;
  DilationSpec dilation;
  AllreduceAlgo algo = AllreduceAlgo::native;
  GradFormat grad_format = GradFormat::fp32;  // --grad-comm (comm/grad_format.h)

  std::unique_ptr<Device> device;
  Dataset data;
  std::unique_ptr<Model> model;

  // The dataset in device memory. On the CPU backend these point into `data` (no copy).
  const float* x = nullptr;
  const int32_t* y = nullptr;
  const float* test_x = nullptr;
  const int32_t* test_y = nullptr;
  DeviceBuffer<float> x_buf, test_x_buf;
  DeviceBuffer<int32_t> y_buf, test_y_buf;

  int gpu_most_on_one = 0;  // RankPlace's: > 1 when ranks of this node share a GPU

  NonfiniteInjection test_nonfinite;  // a test hook (nonfinite_hook.h); inert unless set
};

// Validates options against each other, the machine and the data; throws InputError naming the
// problem.
std::unique_ptr<RankSetup> set_up_rank(const TrainOptions& opts, const RankPlace& place);

}  // namespace dpscale
