// link_model.h — the α-β link model (textbook 15.2, Code 15.2.1): the --link and --link-dilation
// specs, their parsers, and the modelled time of an all-reduce. No MPI here: the harness checks
// configs with these parsers and the MPI backend emulates links with this model.
//
// A ring all-reduce of B bytes over K ranks makes 2(K-1) hops of B/K bytes, each paying the
// per-hop latency α and the transfer time (B/K)/β:
//     t_ring(B, K) = 2(K-1) · (α + (B/K) / β)
// The star ("send everything to rank 0") pushes 2(K-1) whole buffers through rank 0's link:
//     t_star(B, K) = 2(K-1) · (α + B / β)
// Presets (per-hop α, link bandwidth β), from the textbook and the workshop:
//     nvlink 1 µs, 300 GB/s   pcie4 10 µs, 25 GB/s   ib100 5 µs, 12.5 GB/s   eth10 50 µs, 1.25 GB/s
// "ALPHA_US:GBPS" gives a custom link. Every modelled time is multiplied by the dilation F:
// a machine F times slower than the target GPU then keeps that GPU's comm-to-compute ratio.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dpscale {

struct LinkModel {
  std::string name = "none";  // preset name, "custom", or "none"
  double alpha_us = 0.0;      // per-hop latency, microseconds
  double gbps = 0.0;          // bandwidth, GB/s (1e9 bytes per second)
  double dilation = 1.0;      // multiplies every modelled time

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

// Parses --link: none | nvlink | pcie4 | ib100 | eth10 | ALPHA_US:GBPS. OptionError otherwise.
LinkModel parse_link(const std::string& spec);

// --link-dilation: a number 0 < F <= 1e6, or "auto:TFLOPS" (0 < TFLOPS <= 1e4) (returned as auto_tflops > 0, F left to the
// caller, which measures this machine's GEMM rate: F = TFLOPS·1e12 / measured FLOP/s).
struct DilationSpec {
  double factor = 1.0;
  double auto_tflops = 0.0;
};
DilationSpec parse_dilation(const std::string& spec);

// The all-reduce algorithms of the MPI backend (--allreduce), named here so that every parser of
// the name is this one; their MPI implementations are in comm/allreduce_algos.h.
//   native  the MPI library's own MPI_Allreduce
//   ring    the workshop's ring over point-to-point messages
//   star    the workshop's "naive way": everything to rank 0 and back
enum class AllreduceAlgo { native, ring, star };
AllreduceAlgo parse_allreduce_algo(const std::string& name);  // OptionError if unknown
const char* allreduce_algo_name(AllreduceAlgo a);
const std::vector<std::string>& allreduce_algo_names();  // in AllreduceAlgo's order

// The α-β time the link model assigns to one all-reduce of `nbytes` with this algorithm's own
// message pattern (native is modelled as a ring: the bandwidth-optimal schedule).
double modelled_seconds(AllreduceAlgo algo, const LinkModel& link, size_t nbytes, int k);

}  // namespace dpscale
