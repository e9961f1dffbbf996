// shard_sim.h — one step of sharded data parallelism (train_sharded, ZeRO stages 1-3) as the
// FIFO simulation of step_sim.h, with collectives of three kinds on the one channel: all-reduce
// (comm_time.h's seconds), reduce-scatter and all-gather (its shard_seconds: each its own α-β
// pattern, (K-1) hops of B/K, not a factor of the all-reduce). What the trainers issue, and when
// (trainers/sync_sharded.cpp, trainers/sync_sharded_params.cpp):
//
//   stage 1  units = bucketed's buckets; each all-reduced when backward completes it (the loss
//            slot in the last); after backward every unit all-gathered in fp32 (B bytes) and a
//            one-float flag all-reduce, all waited for: nothing overlaps them
//   stage 2  each bucket reduce-scattered when backward completes it (the wire format), the loss
//            slot's one-float all-reduce behind the last; every bucket's all-gather queued as the
//            next forward begins (in the order forward reads them), forward's compute waiting for
//            a bucket where it first reads it; whole from there to the update
//   stage 3  units = the model's layers (shard_plan.h's layer_units); the root units (tensors of
//            no layer: the transformer's ln_f and wpe+wte) all-gathered at forward's start and
//            kept for the step. Forward, before each layer: its all-gather waited for, the P =
//            --prefetch-units next queued behind it, the layer before released. Backward, in
//            its order, the same; the layer forward ended with stays whole, so it is not
//            gathered again, and a layer backward never reads (the MLP's layer 0: no dX) is
//            gathered only as a prefetch (P ≥ 1). Each layer's gradient reduce-scattered when
//            complete (the loss slot's all-reduce behind the last), the flag after the update;
//            the step ends when the compute and the channel are done. Compute and comm are
//            coupled: a layer's compute starts only once its all-gather has ended, and a queued
//            all-gather waits on the channel behind the reduce-scatters issued before it.
//
// Compute is split by FLOP share as step_sim.h splits it (the backward plan's ready and read
// points). Left out: the update is not moved after the wait (it stays in t_c, so stage 1's
// gathers start at t_c rather than after the update), and updating 1/K of the parameters
// instead of all is not credited (φ, machine_terms.h, is fitted on DDP's modes). Accumulation
// is not modelled for the sharded mode (refused by step_model.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/model_spec.h"
#include "step_sim.h"

namespace dpscale::predict {

enum class CollKind { allreduce, reduce_scatter, allgather };

// One collective of the step, in issue order: its bytes (the buffer's, as the record counts
// them), when the trainer issued it, and when it ran on the channel.
struct Collective {
  CollKind kind = CollKind::allreduce;
  int64_t nbytes = 0;
  double issued = 0, start = 0, end = 0;
};

struct ShardStep {
  StepTimes times;  // calls: the all-reduces only (the record's allreduce_calls_per_step)
  std::vector<Collective> calls;
  double compute_end = 0;   // when the compute thread is done: t_c plus its waits for all-gathers
  double gather_wait = 0;   // of that, waited for all-gathers before a unit's compute (stages 2, 3)
  int64_t bytes(CollKind k) const;  // per step, of one kind
};

using CollectiveSeconds = std::function<double(CollKind, int64_t)>;

// The step of `sync` (mode sharded, its shard_stage and prefetch_units) at compute t_c.
ShardStep simulate_sharded(const ModelSpec& spec, const SyncSetup& sync, double t_compute, const CollectiveSeconds& seconds);

}  // namespace dpscale::predict
