// replica_check.h — the end-of-run replica check: after training, every rank hashes
// its weights (checksum_floats: FNV-1a over the bytes, core/fnv1a.h), the hashes are gathered,
// and any rank whose hash differs from rank 0's fails the run, as nccl-tests' `#wrong` does.
//
// Replicas agree by construction: every rank applies the same all-reduced gradients to the
// same start weights (checked at start-up). A disagreement means the all-reduce returned
// different sums to different ranks, or memory was corrupted: the results are not one model's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpscale {

struct ReplicaVerdict {
  bool agree = true;
  int first_differing_rank = -1;  // the lowest rank whose checksum is not rank 0's
  int n_differing = 0;
};

// Compares every rank's checksum (in rank order) with rank 0's.
ReplicaVerdict compare_replicas(const std::vector<uint64_t>& checksums);

// "replicas differ after training: 1 of 4 ranks (first: rank 2, checksum 0x..., rank 0 has 0x...)".
std::string describe_disagreement(const ReplicaVerdict& v, const std::vector<uint64_t>& checksums);

}  // namespace dpscale
