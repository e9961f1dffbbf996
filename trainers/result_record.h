// result_record.h — the RESULTS_JSON record: the contract between the trainers (which write it)
// and the harness (which reads it). Its fields are defined here, once, for both.
//
// A trainer prints exactly one line on stdout:  RESULTS_JSON: {...}
// Schema "dpscale.result/1"; fields that do not apply to a mode are null (e.g. comm_s for
// single, bucket_cap_mb outside bucketed). The README documents every field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dpscale {

inline constexpr const char* kResultSchema = "dpscale.result/1";
inline constexpr const char* kResultPrefix = "RESULTS_JSON: ";

struct RunRecord {
  std::string schema = kResultSchema;
  std::string mode;            // single | naive | interleaved | bucketed
  std::string backend;         // cpu | cuda
  std::string device_name;
  std::string model;           // preset name or "custom"
  std::vector<int> widths;
  int64_t n_params = 0;
  int world_size = 1;
  int n_nodes = 1;
  int global_batch = 0;
  int local_batch = 0;
  std::string dataset;         // synthetic | fashion-mnist | npy
  int64_t n_samples = 0;
  int epochs = 0;
  int64_t steps_per_epoch = 0;
  int64_t steps = 0;           // optimizer steps actually taken
  double lr = 0.0;
  uint64_t seed = 0;
  int threads = 1;

  std::vector<double> epoch_times_s;     // slowest rank's time of each epoch
  double avg_epoch_s = 0.0;
  double throughput_samples_per_s = 0.0;
  std::vector<double> losses;            // per epoch: mean over steps of the global loss
  std::vector<double> loss_global;       // same as losses (named as the workshop discusses it)
  std::vector<double> loss_rank0;        // per epoch: mean of rank 0's local-shard loss
  std::optional<double> test_accuracy;   // null without a test split

  // data-parallel
  std::string comm = "none";             // none | mpi | nccl
  std::string allreduce = "none";        // none | native | ring | star | nccl
  std::string link = "none";
  std::optional<double> link_alpha_us, link_gbps;
  double link_dilation = 1.0;
  std::optional<double> comm_s;          // naive: per-epoch blocking all-reduce phase
  std::optional<double> exposed_comm_s;  // interleaved/bucketed: per-epoch time finish() waited
  std::optional<double> comm_busy_s;     // per-epoch summed all-reduce durations
  double compute_s = 0.0;                // per-epoch time not spent waiting on comm
  int allreduce_calls_per_step = 0;
  int64_t allreduce_bytes_per_step = 0;
  std::optional<double> bucket_cap_mb, first_bucket_mb;
  std::optional<int> n_buckets;
  std::vector<int64_t> bucket_bytes;
  std::vector<double> per_rank_epoch_s;  // each rank's average epoch time

  std::string mpi_library;
  std::string nccl_version;
  std::string version;                   // git describe of the build
  std::string timestamp;                 // UTC, ISO 8601
};

nlohmann::ordered_json to_json(const RunRecord& r);
// Throws std::runtime_error naming the first missing or mistyped field.
RunRecord record_from_json(const nlohmann::json& j);

// "RESULTS_JSON: {...}" for stdout.
std::string format_results_line(const RunRecord& r);
// Finds a RESULTS_JSON line in a process's output and parses its JSON; nullopt if there is none
// or it is not a JSON object.
std::optional<nlohmann::json> find_results_json(const std::string& output);

}  // namespace dpscale
