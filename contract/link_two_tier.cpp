// link_two_tier.cpp — the two-tier link (--link intra=SPEC,inter=SPEC[,ranks-per-node=L]) and
// the α-β time of each all-reduce algorithm on a shape of nodes (formulas in link_model.h).
#include <algorithm>
#include <map>

#include "link_model.h"
#include "core/errors.h"
#include "option_values.h"

namespace dpscale {

namespace {

struct Tier {
  double alpha_s, bytes_per_s;
  double hop(double bytes) const { return alpha_s + bytes / bytes_per_s; }
};

// "a=b,c=d" -> {a: b, c: d}; a repeated or empty key is refused.
std::map<std::string, std::string> key_values(const std::string& spec) {
  std::map<std::string, std::string> kv;
  size_t start = 0;
  for (;;) {
    const size_t comma = spec.find(',', start);
    const std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw OptionError("--link", "'" + item + "' in '" + spec + "' is not KEY=VALUE (use intra=SPEC,inter=SPEC[,ranks-per-node=L])");
    }
    if (!kv.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
      throw OptionError("--link", "'" + item.substr(0, eq) + "' given twice in '" + spec + "'");
    }
    if (comma == std::string::npos) return kv;
    start = comma + 1;
  }
}

// One tier: any one-tier spec but none; the error names the tier.
LinkModel tier(const std::string& key, const std::string& value) {
  if (value == "none") throw OptionError("--link", key + "=none: a tier needs a link (" + link_preset_names(", ") +
                                              " or ALPHA_US:GBPS)");
  if (value.find('=') != std::string::npos) throw OptionError("--link", key + "='" + value + "' is not a one-tier link");
  try {
    return parse_link(value);
  } catch (const OptionError& e) {
    throw OptionError("--link", key + "=" + value + ": " + e.complaint());
  }
}

}  // namespace

LinkModel parse_two_tier_link(const std::string& spec) {
  auto kv = key_values(spec);
  for (const auto& [k, v] : kv) {
    if (k != "intra" && k != "inter" && k != "ranks-per-node") {
      throw OptionError("--link", "unknown key '" + k + "' in '" + spec + "' (use intra, inter, ranks-per-node)");
    }
  }
  for (const char* need : {"intra", "inter"}) {
    if (!kv.count(need)) throw OptionError("--link", "'" + spec + "' names no " + need + "= tier (use intra=SPEC,inter=SPEC)");
  }
  const LinkModel intra = tier("intra", kv["intra"]), inter = tier("inter", kv["inter"]);
  LinkModel m{"two-tier", intra.alpha_us, intra.gbps, 1.0};
  m.two_tier = true;
  m.inter_alpha_us = inter.alpha_us;
  m.inter_gbps = inter.gbps;
  if (kv.count("ranks-per-node")) {
    try {
      m.ranks_per_node = static_cast<int>(parse_whole(kv["ranks-per-node"], 1, kMaxRanksPerNode));
    } catch (const ValueError& e) {
      throw OptionError("--link", std::string("ranks-per-node in '") + spec + "' " + e.what());
    }
  }
  return m;
}

double modelled_seconds(AllreduceAlgo algo, const LinkModel& link, size_t nbytes, NodeShape shape) {
  const int k = shape.ranks(), n = shape.nodes, l = shape.per_node;
  if (!link.enabled() || k <= 1) return 0.0;
  const Tier intra{link.alpha_us * 1e-6, link.gbps * 1e9};
  const Tier inter = link.two_tier ? Tier{link.inter_alpha_us * 1e-6, link.inter_gbps * 1e9} : intra;
  const double b = static_cast<double>(nbytes);
  // Each tier's hops are the algorithm's own (allreduce_algo.h, hop_pattern); this adds only
  // which tier each hop crosses.
  double t = 0.0;
  switch (algo) {
    case AllreduceAlgo::native:
    case AllreduceAlgo::ring: {
      const HopPattern p = hop_pattern(AllreduceAlgo::ring, b, k);
      const double hop = n > 1 ? std::max(intra.hop(p.hop_bytes), inter.hop(p.hop_bytes)) : intra.hop(p.hop_bytes);
      t = p.steps * hop;
      break;
    }
    case AllreduceAlgo::star: {
      // Of the star's hops over all K ranks, those with rank 0's own node stay inside it.
      const HopPattern all = hop_pattern(AllreduceAlgo::star, b, k), own = hop_pattern(AllreduceAlgo::star, b, l);
      t = own.steps * intra.hop(own.hop_bytes) + (all.steps - own.steps) * inter.hop(all.hop_bytes);
      break;
    }
    case AllreduceAlgo::hier: {
      // A ring of the node's L ranks, then a ring of the N nodes over the whole buffer.
      const HopPattern node = hop_pattern(AllreduceAlgo::ring, b, l), across = hop_pattern(AllreduceAlgo::ring, b, n);
      t = node.steps * intra.hop(node.hop_bytes) + across.steps * inter.hop(across.hop_bytes);
      break;
    }
  }
  return link.dilation * t;
}

double modelled_shard_seconds(const LinkModel& link, size_t nbytes, NodeShape shape) {
  const int k = shape.ranks();
  if (!link.enabled() || k <= 1) return 0.0;
  const Tier intra{link.alpha_us * 1e-6, link.gbps * 1e9};
  const Tier inter = link.two_tier ? Tier{link.inter_alpha_us * 1e-6, link.inter_gbps * 1e9} : intra;
  const HopPattern p = shard_hop_pattern(static_cast<double>(nbytes), k);
  const double hop = shape.nodes > 1 ? std::max(intra.hop(p.hop_bytes), inter.hop(p.hop_bytes)) : intra.hop(p.hop_bytes);
  return link.dilation * p.steps * hop;
}

}  // namespace dpscale
