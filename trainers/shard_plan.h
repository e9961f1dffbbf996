// shard_plan.h — how the sharded trainer cuts the flat buffers among K ranks (no MPI; checked
// through the trainer's runs: tests/trainers/test_sharded.cpp's bytes and memory per rank).
//
// The flat buffer (models/param_layout.h: backward order, each tensor on a 64-float boundary) is
// cut into units — DDP's buckets for stages 1 and 2 (each is what backward completes at once,
// so its collective can start then) — and each unit's contiguous range into K equal blocks on
// element boundaries: rank r owns block r of every unit.
//
//   unit u:   [offset_u ........................................ offset_u + count_u)
//             [ block of rank 0 | block of rank 1 | ... | block of rank K-1 ]      count_u = K·block_u
//
// Why element boundaries, not tensor boundaries: the MLP's tensors differ by orders of
// magnitude (a 4096×4096 weight beside a 10-float bias), so whole tensors per rank would leave
// one rank most of the state and the reduce-scatter unequal; NCCL's and MPI's block
// collectives need equal blocks anyway, and an element-wise optimizer does not care where a
// block starts. Each unit ends where the next starts (its trailing padding, zeros, included),
// so every unit but the last is a multiple of 64 floats and splits evenly for K dividing 64; the
// last ends with the last tensor backward produces (the MLP's first-layer bias, the transformer's
// tied embedding) and splits when K divides its size too. Other K are refused with the reason (padding the buffer for them is
// the model library's to offer).
#pragma once

#include <cstdint>
#include <vector>

#include "buckets.h"
#include "models/model.h"
#include "models/optimizer.h"
#include "models/param_layout.h"

namespace dpscale {

struct ShardUnit {
  int first_tensor = 0, last_tensor = 0;  // backward-order tensor indices, inclusive
  int64_t offset = 0;                     // floats into the flat buffers
  int64_t count = 0;                      // floats of the unit: K · block
  int64_t block = 0;                      // floats each rank owns
  int64_t state_offset = 0;               // where this unit's block sits in the rank's optimizer state
  int64_t block_offset(int rank) const { return offset + rank * block; }
};

struct ShardPlan {
  int k = 1;
  std::vector<ShardUnit> units;
  // Floats a rank owns (and holds optimizer state for): Σ block_u, the buffer's 1/K.
  int64_t shard_floats() const { return units.empty() ? 0 : units.back().state_offset + units.back().block; }
  // Floats all units cover: the whole parameter buffer, once.
  int64_t covered_floats() const;
  // Where rank `rank` updates unit u: its block — shifted by `skew` under the test hook.
  int64_t update_offset(const ShardUnit& u, int rank) const;
  int64_t skew = 0;
  int64_t buffer_floats = 0;
};

// Units from `groups` (buckets, in backward order); InputError naming the unit and K when a
// unit does not split into K equal blocks. `skew` (a test hook: DPSCALE_TEST_SHARD_SKEW) shifts
// where each rank updates its block by that many elements (the collectives stay right) — a
// shard offset by one, which must train wrong.
ShardPlan plan_shards(const ParamLayout& layout, const std::vector<Bucket>& groups, int k, int64_t skew = 0);

// Stage 3's units: the model's layers, as FSDP wraps each block — every run of consecutive
// tensors (backward order) of one layer: the MLP's (weight, bias) pairs; the transformer's
// blocks, with ln_f alone at the start and the embeddings (wpe, wte) at the end, the two runs of
// layer -1 (no block).
std::vector<Bucket> layer_units(const ParamLayout& layout);

// The sharded strategies' test hooks (tests/trainers/test_sharded*.cpp), inert unless set: the
// shift of where each rank updates its block (DPSCALE_TEST_SHARD_SKEW; 0 unless set), and no
// all-gather at all (DPSCALE_TEST_SHARD_NO_ALLGATHER: every rank keeps the others' blocks of the
// step before, which the replica check must catch).
int64_t shard_skew_for_test();
bool shard_skips_allgather_for_test();

// One optimizer step of rank `rank`'s blocks (the plan's update_offset, each unit's state at its
// state_offset), reporting into `flag` when not null: what every sharded stage's update does.
void update_own_blocks(Optimizer& optimizer, Model& model, const ShardPlan& plan, int rank, float* flag);

}  // namespace dpscale
