// link_model.h — the α-β link model (textbook 15.2, Code 15.2.1): the --link and --link-dilation
// specs, their parsers, and the modelled time of an all-reduce. No MPI here: the harness checks
// configs with these parsers and the MPI backend emulates links with this model.
//
// Each algorithm's hops (allreduce_algo.h, hop_pattern) each pay the per-hop latency α and the
// transfer time bytes/β:
//     t_ring(B, K) = 2(K-1) · (α + (B/K) / β)      t_star(B, K) = 2(K-1) · (α + B / β)
// Presets (per-hop α, link bandwidth β), from the textbook and the workshop:
//     nvlink 1 µs, 300 GB/s   pcie4 10 µs, 25 GB/s   ib100 5 µs, 12.5 GB/s   eth10 50 µs, 1.25 GB/s
// "ALPHA_US:GBPS" gives a custom link. Every modelled time is multiplied by the dilation F:
// a machine F times slower than the target GPU then keeps that GPU's comm-to-compute ratio.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "allreduce_algo.h"

namespace dpscale {

struct LinkModel {
  std::string name = "none";  // preset name, "custom", or "none"
  double alpha_us = 0.0;      // per-hop latency, microseconds
  double gbps = 0.0;          // bandwidth, GB/s (1e9 bytes per second)
  double dilation = 1.0;      // multiplies every modelled time

  // Two tiers (--link intra=SPEC,inter=SPEC[,ranks-per-node=L]): alpha_us and gbps
  // above are then the intra-node tier (per rank, as NVLink), these the inter-node tier (one
  // per node, shared by the node's ranks, as a NIC); ranks_per_node 0 = the nodes MPI sees.
  bool two_tier = false;
  double inter_alpha_us = 0.0;
  double inter_gbps = 0.0;
  int ranks_per_node = 0;

  bool enabled() const { return name != "none"; }
  // Modelled seconds (dilation included) of one all-reduce of `nbytes` over `k` ranks.
  double ring_seconds(size_t nbytes, int k) const;
  double star_seconds(size_t nbytes, int k) const;
};

// Bounds of a custom link: beyond them a modelled all-reduce takes hours (1e12 µs, 1e-9 GB/s).
inline constexpr double kMaxAlphaUs = 1e5;  // 0.1 s per hop
inline constexpr double kMinGbps = 1e-3;    // 1 MB/s
inline constexpr double kMaxGbps = 1e5;
inline constexpr double kMaxDilation = 1e6;
inline constexpr double kMaxAutoTflops = 1e4;

// The named links of --link, in the order help texts list them; the only copy of their α and β.
struct LinkPreset {
  std::string name;
  double alpha_us;  // per hop
  double gbps;
  std::string what;  // the hardware it stands for
};
const std::vector<LinkPreset>& link_presets();
// The preset names joined: link_preset_names(" | ") = "nvlink | pcie4 | ib100 | eth10".
std::string link_preset_names(const std::string& sep);
// The presets as a Markdown table (`dpscale schema --table links`; docs/link-emulation.md).
std::string link_presets_markdown();

// Parses --link: none | a preset | ALPHA_US:GBPS | a two-tier spec. OptionError otherwise.
LinkModel parse_link(const std::string& spec);

// --link-dilation: a number 0 < F <= 1e6, or "auto:TFLOPS" (0 < TFLOPS <= 1e4) (returned as auto_tflops > 0, F left to the
// caller, which measures this machine's GEMM rate: F = TFLOPS·1e12 / measured FLOP/s).
struct DilationSpec {
  double factor = 1.0;
  double auto_tflops = 0.0;
};
DilationSpec parse_dilation(const std::string& spec);

// The α-β time the link model assigns to one all-reduce of `nbytes` with this algorithm's own
// message pattern (native is modelled as a ring: the bandwidth-optimal schedule).
// Ranks as one node (or, with a two-tier link's ranks_per_node, as that link says).
double modelled_seconds(AllreduceAlgo algo, const LinkModel& link, size_t nbytes, int k);

// ---- Two nodes and the hierarchical all-reduce --------------------------------------------
//
// Where the ranks sit: `nodes` nodes of `per_node` ranks each, ranks numbered node by node
// (mpirun's default --map-by slot, and what --npernode gives).
struct NodeShape {
  int nodes = 1;
  int per_node = 1;
  int ranks() const { return nodes * per_node; }
};

// The α-β time of one all-reduce of B bytes over the shape's K = N·L ranks. Each tier's hop
// costs α + bytes/β; the intra tier is per rank, the inter tier is the node's one link (its
// ranks share it). A one-tier link is both tiers. With N = 1 only the intra tier is crossed.
//   ring/native  2(K-1) steps; each step every rank passes B/K to its neighbour at once, and
//                the step lasts as long as its slowest hop (an inter hop once N > 1):
//                    2(K-1) · max(α_i + B/K/β_i, α_e + B/K/β_e)
//   star         rank 0 receives and sends K-1 whole buffers, L-1 of them within its node:
//                    2(L-1)(α_i + B/β_i) + 2(K-L)(α_e + B/β_e)
//   hier         ring reduce-scatter and all-gather within the node (B/L per hop), and between
//                them an all-reduce of each rank's B/L across the N nodes; the node's L ranks
//                do theirs at once over the node's one link, so a step carries L·B/(L·N):
//                    2(L-1)(α_i + B/L/β_i)  +  2(N-1)(α_e + B/(N·β_e))
//                The inter-node term is one node's payload, not every rank's: flat ring puts
//                2(K-1)/K·B on the link, hier 2(N-1)/N·B — for K = 4 on 2 nodes 1.5 B vs 1 B.
// Dilation multiplies the result, as for one tier.
double modelled_seconds(AllreduceAlgo algo, const LinkModel& link, size_t nbytes, NodeShape shape);

// The α-β time of one reduce-scatter or all-gather of a B-byte buffer (allreduce_algo.h,
// shard_hop_pattern) over the shape: (K-1) steps of B/K, each as long as its slowest hop (an
// inter-node hop once N > 1), × the dilation.
double modelled_shard_seconds(const LinkModel& link, size_t nbytes, NodeShape shape);

// The spec of a two-tier link, as parse_link reads it; OptionError (naming --link) on a bad
// tier, a missing tier, an unknown key, or ranks-per-node outside 1..kMaxRanksPerNode.
inline constexpr int kMaxRanksPerNode = 4096;
LinkModel parse_two_tier_link(const std::string& spec);

}  // namespace dpscale
