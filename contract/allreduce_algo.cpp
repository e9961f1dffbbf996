// allreduce_algo.cpp — the algorithms' names and their α-β hop patterns (allreduce_algo.h).
#include "allreduce_algo.h"

#include "core/errors.h"
#include "option_values.h"

namespace dpscale {

AllreduceAlgo parse_allreduce_algo(const std::string& name) {
  try {
    return static_cast<AllreduceAlgo>(parse_choice(name, allreduce_algo_names(), "algorithm"));
  } catch (const ValueError& e) {
    throw OptionError("--allreduce", e.what());
  }
}

const std::vector<std::string>& allreduce_algo_names() {
  static const std::vector<std::string> names = {"native", "ring", "star", "hier"};  // AllreduceAlgo's order
  return names;
}

const char* allreduce_algo_name(AllreduceAlgo a) { return allreduce_algo_names()[static_cast<size_t>(a)].c_str(); }

HopPattern hop_pattern(AllreduceAlgo algo, double nbytes, int k) {
  if (k <= 1) return {};
  const double steps = 2.0 * (k - 1);
  if (algo == AllreduceAlgo::star) return {steps, nbytes, static_cast<double>(k - 1)};
  return {steps, nbytes / k, steps};  // native, ring, and hier on one node: a ring
}

HopPattern shard_hop_pattern(double nbytes, int k) {
  if (k <= 1) return {};
  const double steps = k - 1.0;
  return {steps, nbytes / k, steps};
}

double rank0_bytes_sent(AllreduceAlgo algo, double nbytes, int k) { return hop_pattern(algo, nbytes, k).rank0_bytes_sent(); }

AllreduceBandwidth allreduce_bandwidth(double nbytes, double seconds, int k) {
  AllreduceBandwidth bw;
  if (seconds <= 0.0) return bw;
  bw.algbw_gbps = nbytes / seconds / 1e9;
  // The ring's bytes per rank over the buffer's: 2(k-1)/k (0 for k = 1).
  bw.busbw_gbps = hop_pattern(AllreduceAlgo::ring, nbytes, k).link_bytes() / seconds / 1e9;
  return bw;
}

}  // namespace dpscale
