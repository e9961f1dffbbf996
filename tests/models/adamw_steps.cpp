// adamw_steps.cpp — runs dpscale's Optimizer (models/optimizer.h) on the CPU backend over
// weights and a gradient per step read from .npy files, and writes the weights after every step,
// for test_adamw_torch.py to compare with torch.optim.AdamW.
//
//   adamw_steps W0.npy GRADS.npy OUT.npy LR WEIGHT_DECAY PIECES [sgd MOMENTUM | no-bias-correction]
//
// W0 [n] float32, GRADS [steps, n] float32; OUT [steps, n]. PIECES > 1 updates the buffer as that
// many ranges one after another (a sharded rank's use: each range with its own slice of the
// state), which must give the very bits of one range.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "models/device.h"
#include "models/io/npy.h"
#include "models/optimizer.h"

int main(int argc, char** argv) {
  using namespace dpscale;
  if (argc < 7) {
    std::fprintf(stderr, "usage: adamw_steps W0.npy GRADS.npy OUT.npy LR WEIGHT_DECAY PIECES [sgd MOMENTUM | no-bias-correction]\n");
    return 2;
  }
  const NpyArray w0 = read_npy(argv[1]), gs = read_npy(argv[2]);
  if (w0.descr != "<f4" || gs.descr != "<f4" || w0.shape.size() != 1 || gs.shape.size() != 2 || gs.shape[1] != w0.shape[0]) {
    std::fprintf(stderr, "adamw_steps: W0 must be float32 [n] and GRADS float32 [steps, n]\n");
    return 2;
  }
  const int64_t n = w0.shape[0], steps = gs.shape[0];
  OptimizerConfig cfg;
  cfg.kind = OptimizerKind::adamw;
  cfg.lr = std::atof(argv[4]);
  cfg.weight_decay = std::atof(argv[5]);
  const int pieces = std::atoi(argv[6]);
  if (argc > 7 && std::string(argv[7]) == "no-bias-correction") cfg.bias_correction = false;
  if (argc > 8 && std::string(argv[7]) == "sgd") {
    cfg.kind = OptimizerKind::sgd;
    cfg.momentum = std::atof(argv[8]);
  }
  DeviceOptions dopts;
  dopts.backend = "cpu";
  dopts.gemm = "openblas";
  std::unique_ptr<Device> dev = make_cpu_device(dopts);
  Optimizer opt(*dev, cfg, n);
  std::vector<float> w(static_cast<size_t>(n)), out;
  std::memcpy(w.data(), w0.data.data(), w.size() * sizeof(float));
  const float* g_all = reinterpret_cast<const float*>(gs.data.data());
  for (int64_t t = 0; t < steps; ++t) {
    opt.begin_step();
    const int64_t piece = (n + pieces - 1) / pieces;
    for (int64_t off = 0; off < n; off += piece) {
      const int64_t len = std::min(piece, n - off);
      opt.update(w.data() + off, g_all + t * n + off, len, off, nullptr);
    }
    out.insert(out.end(), w.begin(), w.end());
  }
  write_npy(argv[3], "<f4", {steps, n}, out.data(), out.size() * sizeof(float));
  return 0;
}
