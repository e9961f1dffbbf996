// modes.cpp — the mode table.
#include "modes.h"

#include "core/errors.h"

namespace dpscale {

const std::vector<ModeInfo>& all_modes() {
  static const std::vector<ModeInfo> modes = {
      {Mode::single, "single", "train_single_gpu", "Single",
       "Single-device baseline: forward, backward, SGD; no communication.", false, WaitField::none},
      {Mode::naive, "naive", "train_dp_naive", "Naive DP",
       "Naive data-parallel: full backward, then a blocking all-reduce of every gradient tensor.", true,
       WaitField::comm_s},
      {Mode::interleaved, "interleaved", "train_dp_interleaved", "Interleaved",
       "Interleaved data-parallel: an async all-reduce per tensor, fired the moment backward writes it.", true,
       WaitField::exposed_comm_s},
      {Mode::bucketed, "bucketed", "train_ddp_bucketed", "Bucketed DDP",
       "DDP-style data-parallel: gradients grouped into capped buckets, each reduced async when complete.", true,
       WaitField::exposed_comm_s},
      {Mode::sharded, "sharded", "train_sharded", "Sharded",
       "Sharded data-parallel (ZeRO): each rank updates its shard, keeping optimizer state (stage 1) and reduced "
       "gradients (stage 2) for it alone; the shards are all-gathered.",
       true, WaitField::exposed_comm_s},
  };
  return modes;
}

const ModeInfo& mode_info(Mode m) {
  for (const ModeInfo& i : all_modes()) {
    if (i.mode == m) return i;
  }
  throw std::logic_error("mode missing from the mode table");
}

const ModeInfo* find_mode(std::string_view name) {
  for (const ModeInfo& i : all_modes()) {
    if (name == i.name) return &i;
  }
  return nullptr;
}

std::string mode_label(std::string_view name) {
  if (const ModeInfo* m = find_mode(name)) return m->label;
  return std::string(name);
}

std::string mode_names(const char* separator) {
  std::string s;
  for (const ModeInfo& i : all_modes()) s += (s.empty() ? "" : separator) + std::string(i.name);
  return s;
}

const ModeInfo& mode_named(std::string_view name) {
  if (const ModeInfo* i = find_mode(name)) return *i;
  throw InputError("unknown mode '" + std::string(name) + "' (use " + mode_names(", ") + ")");
}

const char* mode_name(Mode m) { return mode_info(m).name; }

const char* wait_field_name(WaitField f) {
  switch (f) {
    case WaitField::comm_s: return "comm_s";
    case WaitField::exposed_comm_s: return "exposed_comm_s";
    default: return "none";
  }
}

}  // namespace dpscale
