// step_sim.h — one training step of a data-parallel trainer, as a small event simulation.
//
// Compute: the step's compute time t_c (forward + backward at the local batch) is split among
// the GEMMs by their FLOP share, in the order the model runs them. The MLP (models/mlp.cpp):
//   forward, layer 0 .. L-1:   Y = X·Wᵀ             2·b·in·out
//   backward, layer L-1 .. 0:  dW = dYᵀ·X, db       2·b·in·out   then W and b are ready
//                              dX = dY·W            2·b·in·out   (not for layer 0)
// The transformer (models/gpt/gpt.cpp), per token of the batch (S tokens a sample, d the width,
// V the vocabulary; a Conv1D in→out costs 2·in·out each way, attention's four products 2·S·d each):
//   forward, block 0 .. L-1:   c_attn, q·kᵀ, p·v, attn.c_proj, mlp.c_fc, mlp.c_proj; the tied head 2·d·V
//   backward: the head's dwte and dh (4·d·V), then ln_f is ready; per block from the last:
//              mlp.c_proj dW (ready), dX; mlp.c_fc dW (ready), dX, then ln_2 is ready;
//              attn.c_proj dW (ready), dX; attention's four products (8·S·d);
//              attn.c_attn dW (ready), dX, then ln_1 is ready;
//              wpe and wte (the tied embedding, its scatter-add) at the very end.
// Element-wise passes, the loss and the SGD update are left out of the shares (they are a few
// per cent of a step at these widths; see docs/predict/README.md).
//
// Communication: the all-reduces run one at a time, in launch order, on one channel (the comm
// thread or stream): all-reduce j starts at max(its launch, the end of j-1) and takes d(bytes)
// from comm_time.h, its bytes in the wire format (contract/grad_wire.h). The loss slot (4 bytes,
// fp32 in every format) rides in the last all-reduce, as in the trainers.
//   naive        every tensor's all-reduce is launched when backward has finished (one call over
//                the whole buffer when fused)
//   interleaved  each tensor's all-reduce is launched when backward writes it
//   bucketed     each bucket (trainers/buckets.h, the trainers' own assignment over the model's
//                own layout: ModelSpec::layout()) is launched when backward writes its last tensor
// The step ends when backward and the last all-reduce have both finished; exposed comm is the
// part after backward. The sharded mode's reduce-scatters and all-gathers: shard_sim.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "contract/grad_wire.h"
#include "contract/modes.h"
#include "contract/trainer_options.h"
#include "models/model_spec.h"

namespace dpscale::predict {

// A data-parallel mode of contract/modes.h by name; OptionError("--modes", ...) for an unknown
// name or `single` (which has no step to simulate).
Mode parse_dp_mode(const std::string& name);
// The data-parallel modes of contract/modes.h, in its table's order.
std::vector<Mode> data_parallel_modes();
// Those a table shows and --recommend chooses among unless --modes names others: all but
// sharded, which is chosen for the memory it saves, not for its speed.
std::vector<Mode> table_modes();

// Where the gradient of each tensor becomes ready, as a fraction of the step's compute, and
// where forward and backward first read its parameters (what stage 3's all-gathers must beat).
struct GradTensor {
  int64_t nbytes = 0;     // gradient bytes (the loss slot not counted)
  double ready = 0;       // fraction of t_c at which backward has written it
  double forward_read = 0;   // fraction of t_c at which forward first reads the parameters
  double backward_read = -1;  // ... backward does (-1: backward never reads them)
};
struct BackwardPlan {
  std::vector<GradTensor> tensors;  // backward order (ParamLayout's)
  double forward_share = 0;         // fraction of t_c spent in forward
};
BackwardPlan backward_plan(const ModelSpec& spec);
// The GEMM FLOPs of one training step per sample, as the plan above counts them (the MLP's
// 6·Σ in·out less layer 0's dX; the transformer's S·(L·(72·d² + 12·S·d) + 6·d·V)): what the
// compute of a run at another sequence length scales by (step_model.h).
double step_flops_per_sample(const ModelSpec& spec);

// One all-reduce launch: when (seconds into the step) and how many bytes.
struct Launch {
  double at = 0;
  int64_t nbytes = 0;
};

struct SyncSetup {
  Mode mode = Mode::naive;
  bool fused = false;                    // naive --fused
  double bucket_cap_mb = TrainOptions{}.bucket_cap_mb, first_bucket_mb = TrainOptions{}.first_bucket_mb;
  GradFormat grad_format = GradFormat::fp32;  // on the wire (--grad-comm): contract/grad_wire.h's bytes
  int accum_steps = 1;             // micro-batches per optimizer step; only the last communicates
  int shard_stage = TrainOptions{}.shard_stage;        // sharded: 1, 2 or 3 (shard_sim.h)
  int prefetch_units = TrainOptions{}.prefetch_units;  // sharded stage 3: layers gathered ahead
};

// The launches of one step with compute t_c, in launch order.
std::vector<Launch> launches(const ModelSpec& spec, const SyncSetup& sync, double t_compute);

struct StepTimes {
  double compute = 0;  // t_c
  double busy = 0;     // Σ all-reduce durations
  double exposed = 0;  // end of the last all-reduce past the end of backward (≥ 0)
  double step = 0;     // compute + exposed
  int calls = 0;
  std::vector<double> starts;  // when each all-reduce started on the channel, in launch order
};

// FIFO on one channel; `duration(nbytes)` is the modelled time of one all-reduce.
StepTimes simulate_step(const std::vector<Launch>& ls, double t_compute, const std::function<double(int64_t)>& duration);

}  // namespace dpscale::predict
