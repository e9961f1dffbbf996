// gpu_choice.cpp — the node's GPU assignment by UUID (gpu_choice.h).
#include "gpu_choice.h"

#include <algorithm>
#include <cstdio>

namespace dpscale {

std::string uuid_string(const GpuUuid& u) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

GpuChoice choose_gpu(const std::vector<std::vector<GpuUuid>>& visible, int local_rank, bool share) {
  std::vector<GpuUuid> taken;
  std::vector<int> taker;  // local rank that took taken[i] first
  std::vector<int> users;  // local ranks on taken[i]
  GpuChoice mine;
  const auto slot_of = [&](const GpuUuid& u) {
    return static_cast<size_t>(std::find(taken.begin(), taken.end(), u) - taken.begin());
  };
  for (int r = 0; r < static_cast<int>(visible.size()); ++r) {
    const std::vector<GpuUuid>& sees = visible[static_cast<size_t>(r)];
    int pick = -1;
    for (int i = 0; i < static_cast<int>(sees.size()) && pick < 0; ++i) {
      if (slot_of(sees[static_cast<size_t>(i)]) == taken.size()) pick = i;
    }
    if (pick < 0 && !sees.empty() && share) {
      // Every GPU this rank sees is taken: it joins the one with the fewest ranks.
      pick = 0;
      for (int i = 1; i < static_cast<int>(sees.size()); ++i) {
        if (users[slot_of(sees[static_cast<size_t>(i)])] < users[slot_of(sees[static_cast<size_t>(pick)])]) pick = i;
      }
    }
    if (pick < 0 && !sees.empty()) {
      // Every GPU this rank sees is taken: it would share one with a lower local rank.
      const size_t owner = slot_of(sees.front());
      const int n_gpus = [&] {
        std::vector<GpuUuid> all;
        for (const auto& v : visible) {
          for (const GpuUuid& u : v) {
            if (std::find(all.begin(), all.end(), u) == all.end()) all.push_back(u);
          }
        }
        return static_cast<int>(all.size());
      }();
      mine.device_index = -1;
      mine.conflict = "local ranks " + std::to_string(taker[owner]) + " and " + std::to_string(r) + " would share GPU " +
                      uuid_string(sees.front()) + " (" + std::to_string(visible.size()) + " ranks on this node, " +
                      std::to_string(n_gpus) + " distinct GPU(s) among what they see): run one rank per GPU, " +
                      "--share-gpu (a correctness run), or --backend cpu";
      return mine;
    }
    if (pick >= 0) {
      const GpuUuid& u = sees[static_cast<size_t>(pick)];
      const size_t slot = slot_of(u);
      if (slot == taken.size()) {
        taken.push_back(u);
        taker.push_back(r);
        users.push_back(0);
      }
      ++users[slot];
    }
    if (r == local_rank) mine.device_index = pick;
  }
  for (int n : users) mine.most_on_one_gpu = std::max(mine.most_on_one_gpu, n);
  return mine;
}

}  // namespace dpscale
