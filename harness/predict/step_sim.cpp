// step_sim.cpp — the backward plan, the launches of each mode, and the FIFO channel.
#include "step_sim.h"

#include <algorithm>
#include <stdexcept>
#include <cmath>

#include "contract/option_values.h"
#include "core/errors.h"
#include "models/param_layout.h"
#include "trainers/buckets.h"

namespace dpscale::predict {

std::vector<Mode> data_parallel_modes() {
  std::vector<Mode> out;
  for (const ModeInfo& i : all_modes()) {
    // The step model has no terms for sharded training's reduce-scatters and all-gathers yet.
    if (i.data_parallel && i.mode != Mode::sharded) out.push_back(i.mode);
  }
  return out;
}

Mode parse_dp_mode(const std::string& name) {
  const ModeInfo* m = find_mode(name);
  if (m == nullptr || !m->data_parallel) {
    std::vector<std::string> dp;
    for (Mode d : data_parallel_modes()) dp.push_back(mode_name(d));
    throw OptionError("--modes", "unknown data-parallel mode '" + name + "' (use " + or_list(dp) + ")");
  }
  return m->mode;
}

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
    case Mode::single:
      break;
    case Mode::naive:
      if (sync.fused) {
        // The trainers' one call over the whole flat buffer, the layout's padding included.
        ls.push_back({t_compute, ParamLayout(spec).param_buffer_count() * static_cast<int64_t>(sizeof(float))});
      } else {
        for (const GradTensor& g : plan.tensors) ls.push_back({t_compute, g.nbytes});
      }
      break;
    case Mode::interleaved:
      for (const GradTensor& g : plan.tensors) ls.push_back({g.ready * t_compute, g.nbytes});
      break;
    case Mode::sharded:
      throw std::logic_error("predict: no step model of the sharded mode");
    case Mode::bucketed:
      // The trainers' own assignment (the same function train_ddp_bucketed calls); each launch
      // sends its bucket's slice, padding between tensors included.
      for (const Bucket& b : assign_buckets(ParamLayout(spec), sync.bucket_cap_mb, sync.first_bucket_mb)) {
        ls.push_back({plan.tensors[static_cast<size_t>(b.last_tensor)].ready * t_compute, b.nbytes()});
      }
      break;
  }
  // In the wire format, as the trainers send them; the loss rides in the last all-reduce.
  for (size_t i = 0; i < ls.size(); ++i) {
    const bool last = i + 1 == ls.size();
    const size_t floats = static_cast<size_t>(ls[i].nbytes) / sizeof(float) + (last ? 1 : 0);
    ls[i].nbytes = static_cast<int64_t>(grad_wire_bytes(sync.grad_format, floats, last));
  }
  return ls;
}

StepTimes simulate_step(const std::vector<Launch>& ls, double t_compute, const std::function<double(int64_t)>& duration) {
  StepTimes s;
  s.compute = t_compute;
  double channel_free = 0;
  for (const Launch& l : ls) {
    const double d = duration(l.nbytes);
    s.starts.push_back(std::max(channel_free, l.at));
    channel_free = s.starts.back() + d;
    s.busy += d;
  }
  s.calls = static_cast<int>(ls.size());
  s.exposed = std::max(0.0, channel_free - t_compute);
  s.step = t_compute + s.exposed;
  return s;
}

}  // namespace dpscale::predict
