// placement.cpp — the all-gather behind the record's ranks_per_node and nodes.
#include "placement.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace dpscale {

namespace {
// Fixed-size, so the all-gather moves plain bytes. A host name past 63 characters is cut (HOST_NAME_MAX
// is 64 on Linux); the names only label the record.
struct HostEntry {
  char name[64];
  int local_size;
};
}  // namespace

RankPlacement gather_placement(World& world) {
  HostEntry mine{};
  if (::gethostname(mine.name, sizeof mine.name - 1) != 0) std::strcpy(mine.name, "?");
  mine.name[sizeof mine.name - 1] = '\0';
  mine.local_size = world.local_size();
  const std::vector<HostEntry> all = world.all_gather(mine);
  RankPlacement p;
  std::vector<std::string> seen;
  for (const HostEntry& e : all) {
    p.ranks_per_node = std::max(p.ranks_per_node, e.local_size);
    const std::string name(e.name);
    if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
  }
  for (const std::string& n : seen) p.nodes += (p.nodes.empty() ? "" : ",") + n;
  return p;
}

}  // namespace dpscale
