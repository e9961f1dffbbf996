// record.h — the RESULTS_JSON record: the contract between the trainers (which write it) and
// the harness (which reads it). The struct gives code typed access; record_fields() is the one
// table of its fields (JSON name, type, meaning) from which writing, reading, docs/record.md's field
// table (`dpscale schema record --format md`) and the plotter's view of it all come.
//
// A trainer prints exactly one line on stdout:  RESULTS_JSON: {...}
// Schema "dpscale.result/1"; fields that do not apply to a mode are null (e.g. comm_s for
// single, bucket_cap_mb outside bucketed).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dpscale {

inline constexpr const char* kResultSchema = "dpscale.result/1";
inline constexpr const char* kResultPrefix = "RESULTS_JSON: ";

// Typed access to the record; what each field means is said once, in record_fields().
struct RunRecord {
  std::string schema = kResultSchema;
  std::string mode;
  std::string backend;
  std::string device_name;
  std::string model;
  std::vector<int> widths;
  int64_t n_params = 0;
  int seq_len = 0;                   // a transformer's tokens per sample; 0 for the MLP
  int64_t tensor_count = 0;          // tensors of the flat buffer (0 in older records)
  int64_t largest_tensor_bytes = 0;  // the largest of them, fp32 bytes
  int world_size = 1;
  int n_nodes = 1;
  // Placement: the most ranks on one node, and the nodes' host names in rank order (null in
  // records written before they were recorded).
  std::optional<int> ranks_per_node;
  std::optional<std::string> nodes;
  int global_batch = 0;
  int local_batch = 0;
  std::string dataset;
  int64_t n_samples = 0;
  int epochs = 0;
  int64_t steps_per_epoch = 0;
  int64_t steps = 0;
  double lr = 0.0;
  uint64_t seed = 0;
  int threads = 1;

  std::vector<double> epoch_times_s;
  double avg_epoch_s = 0.0;
  double throughput_samples_per_s = 0.0;
  double tokens_per_s = 0.0;  // throughput · seq_len; 0 for the MLP
  std::vector<double> losses;
  std::vector<double> loss_global;
  std::vector<double> loss_rank0;
  std::optional<double> test_accuracy;

  std::string comm = "none";
  std::string allreduce = "none";
  std::string link = "none";
  std::optional<double> link_alpha_us, link_gbps;
  double link_dilation = 1.0;
  std::optional<double> comm_s;
  std::optional<double> exposed_comm_s;
  std::optional<double> comm_busy_s;
  double compute_s = 0.0;
  int allreduce_calls_per_step = 0;
  int64_t allreduce_bytes_per_step = 0;
  std::optional<double> bucket_cap_mb, first_bucket_mb;
  std::optional<int> n_buckets;
  std::vector<int64_t> bucket_bytes;
  std::vector<double> per_rank_epoch_s;

  std::string mpi_library;
  std::string nccl_version;
  std::string version;
  std::string timestamp;

  // reliability
  std::optional<bool> replicas_agree;  // data-parallel: every rank's final weights hash alike
  // why a run scaled as it did (trainers/diagnosis/diagnosis.cpp fills these)
  std::vector<double> per_rank_compute_s;
  std::vector<double> per_rank_wait_s;
  double loader_s = 0.0;
  double loader_delay_ms = 0.0;
  int prefetch = 0;
  std::string inject_delay;
  std::string bottleneck;
  std::optional<int> straggler_rank;
  std::string diagnosis;
  int triad_steps = 0;
  std::optional<double> triad_step_s, compute_only_step_s, comm_only_step_s, exposed_comm_step_s, overlap_pct;
  std::vector<int64_t> allreduce_unit_bytes;
  std::vector<double> bucket_busbw_gbps;
  // accumulation and the gradients' wire format (optional: older records read back as null)
  std::optional<int> accum_steps;
  std::optional<std::string> grad_comm;
  std::optional<std::string> bucket_rule;
  // the GEMMs' math mode (models/device.h); "" in records written before the field existed
  std::string cublas_math;
  // The straggler rule (trainers/diagnosis/straggler.h): where the straggler_rank loses its time.
  std::optional<std::string> straggler_cause;  // compute | loader | link; null: none found
  bool tf32 = false;                           // --tf32 (absent in older records: false)
  // The CPU backend's GEMM library (models/gemm): "" in older records and on CUDA.
  std::string gemm_library, gemm_kernel, gemm_pinned, gemm_choice, gemm_passed_over;
  // Contention (trainers/diagnosis/contention.h): what the ranks' threads lost waiting for a CPU.
  // Empty / null in older records and where /proc gives no schedstat.
  std::vector<double> per_rank_run_delay_s;
  std::vector<double> per_rank_involuntary_switches;
  std::vector<double> per_rank_step_run_delay_s;
  std::vector<double> epoch_run_delay_share;
  std::optional<double> run_delay_share;  // the disturbance rule's figure (harness/results/machine_state.h)
  std::optional<int> contended_rank;      // the straggler rule's contended rank (not a straggler)
  std::optional<std::string> contended_cause;
  // What the per-step finite check covered (absent in older records: "" and null).
  std::string finite_check;                     // "optimizer" | "off"
  std::string forward_epilogue;                 // "pass" | "cublaslt" | "cublaslt+pass"
  std::optional<int> finite_check_every;        // --finite-check-every
  // --share-gpu placed two or more of the job's ranks on one GPU: a correctness run, not a
  // measurement of scaling (absent in older records: false).
  bool gpu_shared = false;
  // The optimizer and what each rank holds (models/optimizer.h; the sharded trainer's stages:
  // trainers/sync_sharded.cpp). Absent in older records: "" and 0.
  std::string optimizer;
  int shard_stage = 0;
  std::optional<int> prefetch_units;
  int64_t param_bytes_per_rank = 0, grad_bytes_per_rank = 0, optim_bytes_per_rank = 0;
  int64_t peak_device_bytes = 0;
  int64_t peak_rss_bytes = 0;
  int64_t reduce_scatter_bytes_per_step = 0, allgather_bytes_per_step = 0;
  double allgather_s = 0.0, allgather_exposed_s = 0.0;
};

// One field of the record. `type` is derived from the member's C++ type: "string", "int",
// "float", "int[]", "float[]", with " | null" for optional fields.
struct RecordField {
  std::string name;
  std::string type;
  std::string meaning;
  std::function<void(const RunRecord&, nlohmann::ordered_json&)> write;
  // Throws std::runtime_error naming the field when it is missing (and not optional) or mistyped.
  std::function<void(const nlohmann::json&, RunRecord&)> read;
};
// In the order the record is written.
const std::vector<RecordField>& record_fields();

nlohmann::ordered_json to_json(const RunRecord& r);
// Throws std::runtime_error naming the first missing or mistyped field.
RunRecord record_from_json(const nlohmann::json& j);

// Now, in UTC, as strftime `format`; the default is the record's timestamp form,
// "2026-11-22T08:12:03Z" (ISO 8601).
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");
// `git describe` of the sources this binary was built from (the record's "version").
const char* build_version();

// "RESULTS_JSON: {...}" for stdout.
std::string format_results_line(const RunRecord& r);
// Finds a RESULTS_JSON line in a process's output and parses its JSON; nullopt if there is none
// or it is not a JSON object.
std::optional<nlohmann::json> find_results_json(const std::string& output);

}  // namespace dpscale
