// config_hash.cpp — the hash of what decides how every point of a config is run (config.h).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/fnv1a.h"
#include "harness/sweep/config.h"

namespace dpscale {

std::string config_hash(const SweepConfig& c) {
  nlohmann::json j = {{"link", c.link}, {"link_dilation", c.link_dilation}, {"backend", c.backend}};
  if (c.nice != 0) j["nice"] = c.nice;  // only when set: configs without it keep their hash
  // The placement axis is a list like world_sizes: left out, so adding a placement and resuming
  // extends a sweep (each point's run id names its placement).
  nlohmann::json opts = nlohmann::json::array();
  for (const TrainerArg& a : c.options) opts.push_back({a.option->key, a.value});
  j["options"] = opts;
  const std::string text = j.dump();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(text.data(), text.size())));
  return hex;
}

}  // namespace dpscale
