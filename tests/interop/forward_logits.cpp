// forward_logits.cpp — test helper: the logits dpscale's own forward pass gives for a checkpoint.
//
//   forward_logits MODEL CHECKPOINT FEATURES.npy OUT.npy
// Loads a --save checkpoint into the MLP of MODEL (preset or widths) on the CPU backend, runs the
// forward pass over FEATURES ([N, in] float32) and writes the logits [N, out] as float32 .npy, so
// tests/interop/test_torch_checkpoint.py can hold them against PyTorch's.
#include <iostream>

#include "models/device.h"
#include "core/errors.h"
#include "models/io/npy.h"
#include "models/io/safetensors.h"
#include "models/mlp.h"

int main(int argc, char** argv) {
  using namespace dpscale;
  if (argc != 5) {
    std::cerr << "usage: forward_logits MODEL CHECKPOINT FEATURES.npy OUT.npy" << std::endl;
    return 2;
  }
  try {
    const MlpSpec spec = parse_model(argv[1]);
    const NpyArray x = read_npy(argv[3]);
    if (x.descr != "<f4" || x.shape.size() != 2 || x.shape[1] != spec.in_width()) {
      throw InputError(std::string(argv[3]) + ": expected float32 [N, " + std::to_string(spec.in_width()) + "]");
    }
    const int rows = static_cast<int>(x.shape[0]);
    DeviceOptions dopts;
    dopts.backend = "cpu";
    auto dev = make_device(dopts);
    Mlp model(*dev, spec, rows);
    model.params_from_host(load_checkpoint(argv[2], model.layout()));
    const float* logits = model.forward(reinterpret_cast<const float*>(x.data.data()), rows);
    const size_t n = static_cast<size_t>(rows) * static_cast<size_t>(spec.out_width());
    write_npy(argv[4], "<f4", {rows, spec.out_width()}, logits, n * sizeof(float));
    return 0;
  } catch (const InputError& e) {
    std::cerr << "forward_logits: " << e.what() << std::endl;
    return 2;
  }
}
