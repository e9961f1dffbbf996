// shard_plan.cpp — units and blocks (shard_plan.h).
#include "shard_plan.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/errors.h"

namespace dpscale {

int64_t ShardPlan::covered_floats() const {
  int64_t n = 0;
  for (const ShardUnit& u : units) n += u.count;
  return n;
}

ShardPlan plan_shards(const ParamLayout& layout, const std::vector<Bucket>& groups, int k, int64_t skew) {
  ShardPlan p;
  p.k = k;
  int64_t state = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    ShardUnit u;
    u.first_tensor = groups[i].first_tensor;
    u.last_tensor = groups[i].last_tensor;
    u.offset = groups[i].offset;
    const int64_t end = i + 1 < groups.size() ? groups[i + 1].offset : layout.param_buffer_count();
    u.count = end - u.offset;
    if (u.count % k != 0) {
      throw InputError("sharded: unit " + std::to_string(i) + " (" +
                       layout.tensors()[static_cast<size_t>(u.first_tensor)].name() + " .. " +
                       layout.tensors()[static_cast<size_t>(u.last_tensor)].name() + ", " + std::to_string(u.count) +
                       " floats) does not split into " + std::to_string(k) +
                       " equal shards; K must divide 64 and the size of the last tensor backward completes");
    }
    u.block = u.count / k;
    u.state_offset = state;
    state += u.block;
    p.units.push_back(u);
  }
  p.skew = skew;
  p.buffer_floats = layout.param_buffer_count();
  return p;
}

std::vector<Bucket> layer_units(const ParamLayout& layout) {
  std::vector<Bucket> units;
  const std::vector<FlatTensor>& ts = layout.tensors();
  for (size_t i = 0; i < ts.size(); ++i) {
    if (units.empty() || ts[i].layer != ts[static_cast<size_t>(units.back().last_tensor)].layer) {
      Bucket b;
      b.first_tensor = b.last_tensor = static_cast<int>(i);
      b.offset = ts[i].offset;
      units.push_back(b);
    }
    Bucket& b = units.back();
    b.last_tensor = static_cast<int>(i);
    b.count = ts[i].offset + ts[i].count - b.offset;
    b.payload += ts[i].count;
  }
  return units;
}

int64_t ShardPlan::update_offset(const ShardUnit& u, int rank) const {
  const int64_t start = u.block_offset(rank) + skew;
  return std::max<int64_t>(0, std::min(start, buffer_floats - u.block));  // the hook's shift stays in the buffer
}

int64_t shard_skew_for_test() {
  const char* v = std::getenv("DPSCALE_TEST_SHARD_SKEW");
  return v && *v ? std::atoll(v) : 0;
}

bool shard_skips_allgather_for_test() {
  const char* v = std::getenv("DPSCALE_TEST_SHARD_NO_ALLGATHER");
  return v && *v && std::string(v) != "0";
}

void update_own_blocks(Optimizer& optimizer, Model& model, const ShardPlan& plan, int rank, float* flag) {
  optimizer.begin_step();
  for (const ShardUnit& u : plan.units) {
    const int64_t at = plan.update_offset(u, rank);
    optimizer.update(model.params() + at, model.grads() + at, u.block, u.state_offset, flag);
  }
}

}  // namespace dpscale
