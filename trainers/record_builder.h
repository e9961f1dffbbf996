// record_builder.h — assembles the RESULTS_JSON record from what the ranks measured.
#pragma once

#include <optional>
#include <string>

#include "contract/link_model.h"
#include "contract/record.h"
#include "grad_sync.h"
#include "rank_setup.h"
#include "train_loop.h"

namespace dpscale {

// What the trainer knows besides the epochs: the strategy, the communicator, the launch.
struct RecordContext {
  const RankSetup* setup = nullptr;
  SyncStats sync;
  std::string comm = "none";
  std::string allreduce = "none";
  LinkModel link;
  int n_nodes = 1;
  int ranks_per_node = 1;
  std::string nodes;  // host names, comma-separated (placement.h)
  std::string mpi_library, nccl_version;
  std::string timestamp;
  std::optional<bool> replicas_agree;  // the end-of-run replica check; null for a world of one
  bool gpu_shared = false;             // --share-gpu put two or more ranks on one GPU (any node)
};

RunRecord build_record(const RecordContext& ctx, const PerRankEpochs& epochs, std::optional<double> test_accuracy);

}  // namespace dpscale
