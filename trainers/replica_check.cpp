// replica_check.cpp — comparing the ranks' weight checksums.
#include "replica_check.h"

#include <cstdio>

namespace dpscale {

ReplicaVerdict compare_replicas(const std::vector<uint64_t>& checksums) {
  ReplicaVerdict v;
  for (size_t r = 1; r < checksums.size(); ++r) {
    if (checksums[r] == checksums[0]) continue;
    if (v.agree) v.first_differing_rank = static_cast<int>(r);
    v.agree = false;
    ++v.n_differing;
  }
  return v;
}

std::string describe_disagreement(const ReplicaVerdict& v, const std::vector<uint64_t>& checksums) {
  if (v.agree) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "replicas differ after training: %d of %zu ranks (first: rank %d, checksum %016llx; rank 0 has %016llx)",
                v.n_differing, checksums.size(), v.first_differing_rank,
                static_cast<unsigned long long>(checksums[static_cast<size_t>(v.first_differing_rank)]),
                static_cast<unsigned long long>(checksums[0]));
  return buf;
}

}  // namespace dpscale
