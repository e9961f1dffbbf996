// record_builder.h — assembles the RESULTS_JSON record from what the ranks measured.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "comm/link_model.h"
#include "grad_sync.h"
#include "result_record.h"
#include "session.h"
#include "train_loop.h"

namespace dpscale {

// What rank 0 knows after gathering: per rank, its epoch stats.
struct GatheredStats {
  std::vector<std::vector<EpochStats>> per_rank;  // [rank][epoch]
};

struct RecordContext {
  const Session* session = nullptr;
  SyncStats sync;
  std::string comm = "none";
  std::string allreduce = "none";
  LinkModel link;
  int n_nodes = 1;
  std::string mpi_library, nccl_version;
  std::string timestamp;
};

RunRecord build_record(const RecordContext& ctx, const GatheredStats& stats, std::optional<double> test_accuracy);

// UTC now as "2026-11-22T08:12:03Z".
std::string utc_timestamp();
// The git version compiled into this build.
const char* build_version();

}  // namespace dpscale
