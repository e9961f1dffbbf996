// options.h — every option of the four trainers in one struct, parsed by CLI11.
//
// The usage text is generated from the same table the parser reads. The data-parallel options
// exist only in the executables that use them (--bucket-cap-mb only in train_ddp_bucketed, ...).
#pragma once

#include <cstdint>
#include <string>

#include "models/data/dataset.h"
#include "models/device.h"

namespace dpscale {

enum class Mode { single, naive, interleaved, bucketed };
const char* mode_name(Mode m);               // "single" | "naive" | "interleaved" | "bucketed"
const char* executable_name(Mode m);         // "train_single_gpu" | "train_dp_naive" | ...

struct TrainOptions {
  Mode mode = Mode::single;
  std::string model = "medium";
  DataOptions data;
  int batch_size = 1024;        // global batch: split into K equal shards
  int epochs = 5;
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;
  int warmup_steps = 3;
  int64_t max_steps = 0;        // 0 = no limit
  uint64_t seed = 42;           // weights (and synthetic data)
  DeviceOptions device;
  std::string init_path, save_path;
  bool quiet = false;           // no per-epoch progress lines

  // data-parallel only
  std::string link = "none";
  std::string link_dilation = "1";
  std::string allreduce = "native";
  bool fused = false;           // naive: one all-reduce of the whole flat buffer
  double bucket_cap_mb = 25.0;  // bucketed: MiB, as PyTorch's bucket_cap_mb
  double first_bucket_mb = 1.0;
};

// Parses argv. Returns false after printing --help (exit 0); throws InputError with one line
// naming the bad option otherwise. Checks the values that need no data (ranges, names).
bool parse_options(int argc, char** argv, Mode mode, TrainOptions& out);

// A hash of every option that shapes the computation, for the start-up check that all ranks
// were launched alike.
uint64_t options_fingerprint(const TrainOptions& o);

}  // namespace dpscale
