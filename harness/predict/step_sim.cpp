// step_sim.cpp — the backward plan, the launches of each mode, and the FIFO channel.
#include "step_sim.h"

#include <algorithm>

#include "contract/option_values.h"
#include "models/errors.h"
#include "models/param_layout.h"
#include "trainers/buckets.h"

namespace dpscale::predict {

namespace {
const std::vector<std::string>& mode_names() {
  static const std::vector<std::string> names = {"naive", "interleaved", "bucketed"};  // SyncMode's order
  return names;
}
constexpr int64_t kLossSlotBytes = sizeof(float);
}  // namespace

SyncMode parse_sync_mode(const std::string& name) {
  try {
    return static_cast<SyncMode>(parse_choice(name, mode_names(), "mode"));
  } catch (const ValueError& e) {
    throw OptionError("--modes", e.what());
  }
}

const char* sync_mode_name(SyncMode m) { return mode_names()[static_cast<size_t>(m)].c_str(); }

BackwardPlan backward_plan(const MlpSpec& spec) {
  // FLOPs per row of the local batch (the batch size cancels in the shares).
  const int layers = spec.n_layers();
  auto gemm = [&](int l) { return 2.0 * spec.widths[static_cast<size_t>(l)] * spec.widths[static_cast<size_t>(l) + 1]; };
  double fwd = 0, total = 0;
  for (int l = 0; l < layers; ++l) {
    fwd += gemm(l);
    total += gemm(l) * (l > 0 ? 3 : 2);  // forward, dW, and dX except for layer 0
  }
  const ParamLayout layout(spec);
  BackwardPlan plan;
  plan.forward_share = fwd / total;
  plan.tensors.resize(layout.tensors().size());
  double t = fwd;
  for (int l = layers - 1; l >= 0; --l) {
    t += gemm(l);  // dW (and db) done: the layer's weight and bias gradients are ready
    for (const FlatTensor* ft : {&layout.weight(l), &layout.bias(l)}) {
      plan.tensors[static_cast<size_t>(ft->index)] = GradTensor{ft->nbytes(), t / total};
    }
    if (l > 0) t += gemm(l);  // dX
  }
  return plan;
}

std::vector<Launch> launches(const MlpSpec& spec, const SyncSetup& sync, double t_compute) {
  const BackwardPlan plan = backward_plan(spec);
  std::vector<Launch> ls;
  switch (sync.mode) {
    case SyncMode::naive:
      if (sync.fused) {
        // The trainers' one call over the whole flat buffer, the layout's padding included.
        ls.push_back({t_compute, ParamLayout(spec).param_buffer_count() * static_cast<int64_t>(sizeof(float))});
      } else {
        for (const GradTensor& g : plan.tensors) ls.push_back({t_compute, g.nbytes});
      }
      break;
    case SyncMode::interleaved:
      for (const GradTensor& g : plan.tensors) ls.push_back({g.ready * t_compute, g.nbytes});
      break;
    case SyncMode::bucketed:
      // The trainers' own assignment (the same function train_ddp_bucketed calls); each launch
      // sends its bucket's slice, padding between tensors included.
      for (const Bucket& b : assign_buckets(ParamLayout(spec), sync.bucket_cap_mb, sync.first_bucket_mb)) {
        ls.push_back({plan.tensors[static_cast<size_t>(b.last_tensor)].ready * t_compute, b.nbytes()});
      }
      break;
  }
  if (!ls.empty()) ls.back().nbytes += kLossSlotBytes;  // the loss rides in the last all-reduce
  return ls;
}

StepTimes simulate_step(const std::vector<Launch>& ls, double t_compute, const std::function<double(int64_t)>& duration) {
  StepTimes s;
  s.compute = t_compute;
  double channel_free = 0;
  for (const Launch& l : ls) {
    const double d = duration(l.nbytes);
    channel_free = std::max(channel_free, l.at) + d;
    s.busy += d;
  }
  s.calls = static_cast<int>(ls.size());
  s.exposed = std::max(0.0, channel_free - t_compute);
  s.step = t_compute + s.exposed;
  return s;
}

}  // namespace dpscale::predict
