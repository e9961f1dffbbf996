// allreduce_algo.h — the all-reduce algorithms (--allreduce) and, written once, what each one
// costs in the α-β model: how many hops in sequence, how many bytes each hop carries, how many
// of them rank 0 sends. The MPI link emulation and predict time them (link_model.h's
// modelled_seconds), predict fits α and β to measured times through them (calibration.cpp,
// comm_fit.cpp), bench_allreduce counts rank 0's bytes and the bus bandwidth with them. No MPI
// here; the MPI implementations are in comm/allreduce_algos.h.
//
//   native  the MPI library's own MPI_Allreduce (modelled as a ring: the bandwidth-optimal
//           schedule; what the library really sends is its own business)
//   ring    the workshop's ring over point-to-point messages
//   star    the workshop's "naive way": everything to rank 0 and back
//   hier    hierarchical (textbook 15.2 §3): reduce-scatter inside each node, all-reduce across
//           nodes among the ranks of equal local rank, all-gather inside each node (on one node:
//           a ring; its two tiers: link_model.h)
#pragma once

#include <string>
#include <vector>

namespace dpscale {

enum class AllreduceAlgo { native, ring, star, hier };
AllreduceAlgo parse_allreduce_algo(const std::string& name);  // OptionError (--allreduce) if unknown
const char* allreduce_algo_name(AllreduceAlgo a);
const std::vector<std::string>& allreduce_algo_names();  // in AllreduceAlgo's order

// One all-reduce of B bytes among k ranks on one link, as the α-β model sees it: `steps` hops
// one after another, each carrying `hop_bytes` (a hop costs α + hop_bytes/β), and `rank0_sends`
// of those hops are rank 0 sending.
//   ring   reduce-scatter then all-gather: 2(k-1) steps; in each every rank sends B/k to its
//          neighbour while it receives as much (full duplex: one hop's time), so rank 0 sends
//          in all 2(k-1):   2(k-1) · (α + (B/k)/β)
//   star   rank 0 receives k-1 whole buffers, then sends the sum k-1 times, through its one link
//          in sequence:     2(k-1) · (α + B/β),  rank 0 sending k-1 of them
// For k <= 1 nothing crosses a link: every count is 0.
struct HopPattern {
  double steps = 0.0;
  double hop_bytes = 0.0;
  double rank0_sends = 0.0;
  // The coefficient of 1/β: bytes the model puts through one link in sequence (ring 2(k-1)/k·B,
  // what each rank sends; star 2(k-1)·B, what rank 0's link carries both ways).
  double link_bytes() const { return steps * hop_bytes; }
  double rank0_bytes_sent() const { return rank0_sends * hop_bytes; }
  // The α-β time: alpha_s per hop, bytes_per_s the link's bandwidth.
  double seconds(double alpha_s, double bytes_per_s) const { return steps * (alpha_s + hop_bytes / bytes_per_s); }
};
HopPattern hop_pattern(AllreduceAlgo algo, double nbytes, int k);

// One reduce-scatter or one all-gather of a buffer of B bytes among k ranks (each rank's block
// B/k), as the sharded trainer sends them: half of the ring all-reduce above, its reduce-scatter
// or its all-gather phase:   (k-1) · (α + (B/k)/β),  (k-1)/k · B sent by every rank.
// native and ring alike (the MPI library's MPI_Ireduce_scatter_block / MPI_Iallgather are
// modelled as the bandwidth-optimal ring, as its MPI_Allreduce is); star and hier have no
// reduce-scatter of their own (refused for the sharded mode: contract/option_rules.cpp).
HopPattern shard_hop_pattern(double nbytes, int k);

// Bytes rank 0 sends for one all-reduce of `nbytes` over k ranks: ring 2(k-1)/k·B, star (k-1)·B
// (native counted as a ring; hier sends exactly a ring's bytes per rank, over other links).
double rank0_bytes_sent(AllreduceAlgo algo, double nbytes, int k);

// nccl-tests' bandwidths of one all-reduce of `nbytes` over k ranks that took `seconds`:
//   algbw = nbytes / seconds / 1e9                        (GB/s, 1 GB = 1e9 bytes)
//   busbw = algbw · 2(k-1)/k
// algbw is what the caller sees; busbw rescales it by the traffic a bandwidth-optimal (ring)
// all-reduce must put on each rank's link (the ring's link_bytes, 2(k-1)/k · B), so it is
// comparable across k and with the link's own speed. busbw is 0 for k = 1 (nothing crosses a
// link); both are 0 for seconds <= 0.
struct AllreduceBandwidth {
  double algbw_gbps = 0.0;
  double busbw_gbps = 0.0;
};
AllreduceBandwidth allreduce_bandwidth(double nbytes, double seconds, int k);

}  // namespace dpscale
