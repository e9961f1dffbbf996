// fuzz_link_spec.cpp — libFuzzer target for --link and --link-dilation (contract/link_model.cpp
// parse_link, contract/link_two_tier.cpp parse_two_tier_link, parse_dilation). The input is
// "LINK\nDILATION" (no newline: the whole input is tried as both).
//   build/fuzz/fuzz_link_spec fuzz/corpus/link_spec
//
// What an accepted --link must satisfy:
//   every tier   α within [0, kMaxAlphaUs] and β within [kMinGbps, kMaxGbps] (finite, and
//                positive where the model divides by it); dilation 1 (--link-dilation sets it)
//   one tier     no inter tier and no ranks-per-node
//   two tiers    (the spec has a '='): each tier is what parse_link makes of that tier's text
//                alone; ranks-per-node is 0 (absent) or the number written, within
//                1..kMaxRanksPerNode; the model written back out as
//                "intra=A:G,inter=A:G[,ranks-per-node=L]" parses to the same numbers (no tier
//                swapped, dropped or rounded); and the modelled time of every algorithm on a
//                few node shapes is finite and positive, the old K-ranks form equal to the
//                shape that ranks-per-node gives.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/link_model.h"
#include "contract/option_values.h"
#include "fuzz_input.h"
#include "core/errors.h"

namespace {

using namespace dpscale;

bool alpha_ok(double a) { return std::isfinite(a) && a >= 0 && a <= kMaxAlphaUs; }
bool gbps_ok(double g) { return std::isfinite(g) && g >= kMinGbps && g <= kMaxGbps; }

// The value of `key` in an accepted "k=v,k=v" spec ("" when absent). Accepted specs have no
// empty or repeated keys, so a plain split is enough.
std::string value_of(const std::string& spec, const std::string& key) {
  size_t start = 0;
  for (;;) {
    const size_t comma = spec.find(',', start);
    const std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = item.find('=');
    if (eq != std::string::npos && item.substr(0, eq) == key) return item.substr(eq + 1);
    if (comma == std::string::npos) return "";
    start = comma + 1;
  }
}

bool same_tier(const LinkModel& a, double alpha_us, double gbps) { return a.alpha_us == alpha_us && a.gbps == gbps; }

void check_two_tier(const std::string& spec, const LinkModel& m) {
  fuzz::require(m.name == "two-tier" && m.enabled());
  fuzz::require(alpha_ok(m.inter_alpha_us) && gbps_ok(m.inter_gbps));
  fuzz::require(m.ranks_per_node >= 0 && m.ranks_per_node <= kMaxRanksPerNode);

  // Each tier alone, as a one-tier link: the same numbers (the parser did not swap or mix them).
  const LinkModel intra = parse_link(value_of(spec, "intra")), inter = parse_link(value_of(spec, "inter"));
  fuzz::require(!intra.two_tier && !inter.two_tier);
  fuzz::require(same_tier(intra, m.alpha_us, m.gbps));
  fuzz::require(same_tier(inter, m.inter_alpha_us, m.inter_gbps));
  const std::string rpn = value_of(spec, "ranks-per-node");
  fuzz::require(rpn.empty() ? m.ranks_per_node == 0 : m.ranks_per_node == parse_whole(rpn, 1, kMaxRanksPerNode));

  // Written back out (shortest round-trip numbers) and read again: the same model.
  std::string again = "intra=" + format_number(m.alpha_us) + ":" + format_number(m.gbps) +
                      ",inter=" + format_number(m.inter_alpha_us) + ":" + format_number(m.inter_gbps);
  if (m.ranks_per_node > 0) again += ",ranks-per-node=" + std::to_string(m.ranks_per_node);
  const LinkModel r = parse_link(again);
  fuzz::require(r.two_tier && same_tier(r, m.alpha_us, m.gbps) && r.inter_alpha_us == m.inter_alpha_us &&
                r.inter_gbps == m.inter_gbps && r.ranks_per_node == m.ranks_per_node);

  // The model over it: finite and positive on every shape of more than one rank.
  const size_t bytes = size_t{1} << 20;
  for (AllreduceAlgo algo : {AllreduceAlgo::native, AllreduceAlgo::ring, AllreduceAlgo::star, AllreduceAlgo::hier}) {
    for (NodeShape s : {NodeShape{1, 2}, NodeShape{2, 1}, NodeShape{2, 2}, NodeShape{2, 3}, NodeShape{3, 2}}) {
      const double t = modelled_seconds(algo, m, bytes, s);
      fuzz::require(std::isfinite(t) && t > 0);
    }
    if (m.ranks_per_node > 0) {
      const int l = m.ranks_per_node;
      fuzz::require(modelled_seconds(algo, m, bytes, 2 * l) == modelled_seconds(algo, m, bytes, NodeShape{2, l}));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  const size_t nl = text.find('\n');
  const std::string link = text.substr(0, nl), dilation = nl == std::string::npos ? text : text.substr(nl + 1);
  std::optional<LinkModel> accepted;
  try {
    accepted = parse_link(link);
  } catch (const InputError&) {
  }
  // The checks are outside the try: a re-parse inside them that refuses is a broken property,
  // not a refused input, so its InputError must end the run.
  if (accepted) {
    const LinkModel& m = *accepted;
    fuzz::require(m.dilation == 1.0);
    if (m.enabled()) {
      fuzz::require(alpha_ok(m.alpha_us) && gbps_ok(m.gbps));
    } else {
      fuzz::require(m.alpha_us == 0 && m.gbps == 0);
    }
    if (link.find('=') != std::string::npos) {
      fuzz::require(m.two_tier);
      check_two_tier(link, m);
    } else {
      fuzz::require(!m.two_tier && m.inter_alpha_us == 0 && m.inter_gbps == 0 && m.ranks_per_node == 0);
    }
  }
  try {
    const DilationSpec d = parse_dilation(dilation);
    fuzz::require(std::isfinite(d.factor) && d.factor > 0);
    fuzz::require(std::isfinite(d.auto_tflops) && d.auto_tflops >= 0);
  } catch (const InputError&) {
  }
  return 0;
}
