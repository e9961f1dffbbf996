// gpu_choice.h — which GPU each rank of a node takes, from the GPUs every local rank can see.
//
// Launchers hand out GPUs in two ways: every rank sees all of the node's GPUs (plain mpirun),
// or each rank sees only its own (Slurm's --gpus-per-task=1, a CUDA_VISIBLE_DEVICES per rank),
// where CUDA numbers that one GPU 0 in every rank. A count of visible GPUs cannot tell these
// apart; the GPUs' UUIDs can. Every local rank's list of visible UUIDs (in CUDA's device order)
// is gathered over the node, and each rank computes the same assignment from them: local ranks
// in order, each takes the first GPU it sees that no lower local rank has taken. A rank whose
// every GPU is taken would share one: that, and only that, is refused — unless the job asked to
// share (--share-gpu), when it takes, of the GPUs it sees, the one the fewest lower local ranks
// took (the first on a tie), so K ranks spread over G GPUs as evenly as they can. Pure host
// logic, no MPI and no CUDA, so it is tested on any machine.
#pragma once

#include <string>
#include <vector>

#include "models/gpu_uuid.h"

namespace dpscale {

struct GpuChoice {
  int device_index = -1;  // CUDA device index in this rank's own numbering; -1: it sees no GPU
  std::string conflict;   // non-empty: the one line that refuses the node's assignment
  int most_on_one_gpu = 0;  // the most local ranks on one GPU of the node (> 1 only when sharing)
};

// `visible[r]`: local rank r's GPUs in its CUDA device order. Every rank of the node gets the
// same conflict (the first one in local-rank order), so they all refuse alike. `share`: ranks
// may share a GPU (no conflict then).
GpuChoice choose_gpu(const std::vector<std::vector<GpuUuid>>& visible, int local_rank, bool share = false);

// "GPU-8e3f0b1a-...", as nvidia-smi -L prints a UUID.
std::string uuid_string(const GpuUuid& uuid);

}  // namespace dpscale
