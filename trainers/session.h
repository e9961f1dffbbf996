// session.h — everything one rank sets up on its own before training: options checked, device,
// dataset (on the device), model with its initial weights. No communication happens here, so
// any failure is caught before the first collective and reported by the start-up check.
#pragma once

#include <memory>
#include <optional>

#include "comm/allreduce_algos.h"
#include "comm/link_model.h"
#include "models/data/dataset.h"
#include "models/device.h"
#include "models/mlp.h"
#include "options.h"

namespace dpscale {

struct Session {
  TrainOptions opts;
  MlpSpec spec;
  int rank = 0, world_size = 1;
  int local_batch = 0;
  int64_t steps_per_epoch = 0;

  // The data-parallel options, parsed once here. link.dilation is the factor given; an
  // auto:TFLOPS dilation is resolved by the trainer after the ranks have met.
  LinkModel link;
  DilationSpec dilation;
  AllreduceAlgo algo = AllreduceAlgo::native;

  std::unique_ptr<Device> device;
  Dataset data;
  std::unique_ptr<Mlp> model;

  // The dataset in device memory. On the CPU backend these point into `data` (no copy).
  const float* x = nullptr;
  const int32_t* y = nullptr;
  const float* test_x = nullptr;
  const int32_t* test_y = nullptr;
  DeviceBuffer<float> x_buf, test_x_buf;
  DeviceBuffer<int32_t> y_buf, test_y_buf;
};

// Validates options against each other and the data; throws InputError naming the problem.
std::unique_ptr<Session> prepare_session(const TrainOptions& opts, int rank, int world_size, int gpu_index);

}  // namespace dpscale
