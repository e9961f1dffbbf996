// link_model.h — α-β link emulation for the MPI backend (textbook 15.2, Code 15.2.1).
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

// Parses --link: none | nvlink | pcie4 | ib100 | eth10 | ALPHA_US:GBPS. InputError otherwise.
LinkModel parse_link(const std::string& spec);

// --link-dilation: a number 0 < F <= 1e6, or "auto:TFLOPS" (returned as auto_tflops > 0, F left to the
// caller, which measures this machine's GEMM rate: F = TFLOPS·1e12 / measured FLOP/s).
struct DilationSpec {
  double factor = 1.0;
  double auto_tflops = 0.0;
};
DilationSpec parse_dilation(const std::string& spec);

}  // namespace dpscale
