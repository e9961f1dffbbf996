// step_sim.cpp — the backward plan, the launches of each mode, and the FIFO channel.
#include "step_sim.h"

#include <algorithm>
#include <map>
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
    if (i.data_parallel) out.push_back(i.mode);
  }
  return out;
}

std::vector<Mode> table_modes() {
  std::vector<Mode> out;
  for (Mode m : data_parallel_modes()) {
    if (m != Mode::sharded) out.push_back(m);
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

namespace {

// GEMM units per row of the local batch (the batch size cancels in the shares).
double mlp_gemm(const MlpSpec& spec, int l) {
  return 2.0 * spec.widths[static_cast<size_t>(l)] * spec.widths[static_cast<size_t>(l) + 1];
}

BackwardPlan mlp_backward_plan(const MlpSpec& spec) {
  const int layers = spec.n_layers();
  double fwd = 0, total = 0;
  for (int l = 0; l < layers; ++l) {
    fwd += mlp_gemm(spec, l);
    total += mlp_gemm(spec, l) * (l > 0 ? 3 : 2);  // forward, dW, and dX except for layer 0
  }
  const ParamLayout layout(spec);
  BackwardPlan plan;
  plan.forward_share = fwd / total;
  plan.tensors.resize(layout.tensors().size());
  double t = fwd;
  for (int l = layers - 1; l >= 0; --l) {
    // Backward reads W (for dX) before the layer's dW, so a gate gathers it there; layer 0
    // computes no dX and reads nothing, and no layer reads its bias (models/mlp.cpp).
    const double read = l > 0 ? t / total : -1;
    t += mlp_gemm(spec, l);  // dW (and db) done: the layer's weight and bias gradients are ready
    for (const FlatTensor* ft : {&layout.weight(l), &layout.bias(l)}) {
      plan.tensors[static_cast<size_t>(ft->index)] = GradTensor{ft->nbytes(), t / total, 0, ft == &layout.weight(l) ? read : -1};
    }
    if (l > 0) t += mlp_gemm(spec, l);  // dX
  }
  double f = 0;  // forward reads layer l's W and b as it starts
  for (int l = 0; l < layers; ++l) {
    for (const FlatTensor* ft : {&layout.weight(l), &layout.bias(l)}) plan.tensors[static_cast<size_t>(ft->index)].forward_read = f / total;
    f += mlp_gemm(spec, l);
  }
  return plan;
}

// GEMM FLOPs per token of the transformer's step, split as the plan walks them (step_sim.h).
struct GptFlops {
  double d, S, V;
  double conv(double in, double out) const { return 2 * in * out; }  // one way: forward, dW or dX
  double attention() const { return 2 * S * d; }                     // one of q·kᵀ, p·v and their grads
  double forward_block() const {
    return conv(d, 3 * d) + 2 * attention() + conv(d, d) + conv(d, 4 * d) + conv(4 * d, d);
  }
  double head() const { return 2 * d * V; }
};

BackwardPlan gpt_backward_plan(const GptSpec& g, const ParamLayout& layout) {
  const GptFlops f{static_cast<double>(g.dim), static_cast<double>(g.seq_len), static_cast<double>(g.vocab)};
  const double d = f.d;
  std::map<std::string, double> at;  // tensor name -> FLOPs done when backward has written it
  // Tensor name -> FLOPs done when forward and backward first read it (per block: what the block
  // reads first, ln_1 in forward and mlp.c_proj's weight at its dX in backward; gpt.cpp).
  std::map<std::string, double> fread, bread;
  for (int l = 0; l < g.layers; ++l) fread["h." + std::to_string(l) + "."] = l * f.forward_block();
  fread["ln_f."] = g.layers * f.forward_block();
  double t = g.layers * f.forward_block() + f.head();
  const double fwd = t;
  bread["wte."] = t;  // the tied head's dh reads wte
  t += 2 * f.head();  // dwte (not ready: the embedding adds to it last) and dh
  at["ln_f.weight"] = at["ln_f.bias"] = t;
  bread["ln_f."] = t;
  const auto conv = [&](const std::string& name, double in, double out) {
    t += f.conv(in, out);  // dW, then the bias's column sum: both ready
    at[name + ".weight"] = at[name + ".bias"] = t;
    t += f.conv(in, out);  // dX
  };
  for (int l = g.layers - 1; l >= 0; --l) {
    const std::string h = "h." + std::to_string(l) + ".";
    conv(h + "mlp.c_proj", 4 * d, d);
    bread[h] = at[h + "mlp.c_proj.weight"];
    conv(h + "mlp.c_fc", d, 4 * d);
    at[h + "ln_2.weight"] = at[h + "ln_2.bias"] = t;
    conv(h + "attn.c_proj", d, d);
    t += 4 * f.attention();
    conv(h + "attn.c_attn", d, 3 * d);
    at[h + "ln_1.weight"] = at[h + "ln_1.bias"] = t;
  }
  at["wpe.weight"] = at["wte.weight"] = t;  // the embedding's backward: no GEMM, the step's end
  BackwardPlan plan;
  plan.forward_share = fwd / t;
  for (const FlatTensor& ft : layout.tensors()) {
    const auto it = at.find(ft.name());
    // A tensor gpt_tensors() lists that this walk does not know: the two have drifted apart.
    if (it == at.end()) throw std::logic_error("predict: no backward time for the transformer's tensor " + ft.name());
    // A tensor's reads are its block's (or, outside the blocks, its own name's prefix).
    const std::string& name = ft.name();
    const std::string block = ft.layer >= 0 ? "h." + std::to_string(ft.layer) + "." : name.substr(0, name.find('.') + 1);
    const auto fr = fread.find(block), br = bread.find(block);
    plan.tensors.push_back(GradTensor{ft.nbytes(), it->second / t, fr == fread.end() ? 0.0 : fr->second / t,
                                      br == bread.end() ? -1.0 : br->second / t});
  }
  return plan;
}

}  // namespace

BackwardPlan backward_plan(const ModelSpec& spec) {
  return spec.is_gpt() ? gpt_backward_plan(*spec.gpt, spec.layout()) : mlp_backward_plan(spec.mlp());
}

double step_flops_per_sample(const ModelSpec& spec) {
  if (spec.is_gpt()) {
    const GptSpec& g = *spec.gpt;
    const double d = g.dim, S = g.seq_len;
    return S * (g.layers * (72 * d * d + 12 * S * d) + 6 * d * g.vocab);
  }
  const MlpSpec m = spec.mlp();
  double total = 0;
  for (int l = 0; l < m.n_layers(); ++l) total += mlp_gemm(m, l) * (l > 0 ? 3 : 2);
  return total;
}

std::vector<Launch> launches(const ModelSpec& spec, const SyncSetup& sync, double t_compute) {
  const BackwardPlan plan = backward_plan(spec);
  const ParamLayout layout = spec.layout();
  std::vector<Launch> ls;
  switch (sync.mode) {
    case Mode::single:
      break;
    case Mode::naive:
      if (sync.fused) {
        // The trainers' one call over the whole flat buffer, the layout's padding included.
        ls.push_back({t_compute, layout.param_buffer_count() * static_cast<int64_t>(sizeof(float))});
      } else {
        for (const GradTensor& g : plan.tensors) ls.push_back({t_compute, g.nbytes});
      }
      break;
    case Mode::interleaved:
      for (const GradTensor& g : plan.tensors) ls.push_back({g.ready * t_compute, g.nbytes});
      break;
    case Mode::sharded:
      // Its collectives are of three kinds and stage 3's wait on compute: shard_sim.h.
      throw std::logic_error("predict: the sharded mode's step is shard_sim.h's, not launches()");
    case Mode::bucketed:
      // The trainers' own assignment (the same function train_ddp_bucketed calls); each launch
      // sends its bucket's slice, padding between tensors included.
      for (const Bucket& b : assign_buckets(layout, sync.bucket_cap_mb, sync.first_bucket_mb)) {
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
