// result_record.cpp — RunRecord <-> JSON, in one place.
#include "result_record.h"

#include <sstream>
#include <stdexcept>

namespace dpscale {

namespace {
template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
template <class T>
void get(const nlohmann::json& j, const char* key, T& out) {
  if (!j.contains(key)) throw std::runtime_error(std::string("record has no field '") + key + "'");
  try {
    j.at(key).get_to(out);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(std::string("record field '") + key + "' has the wrong type");
  }
}
template <class T>
void get_opt(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  if (!j.contains(key) || j.at(key).is_null()) {
    out.reset();
    return;
  }
  T v;
  get(j, key, v);
  out = v;
}
}  // namespace

nlohmann::ordered_json to_json(const RunRecord& r) {
  nlohmann::ordered_json j;
  j["schema"] = r.schema;
  j["mode"] = r.mode;
  j["backend"] = r.backend;
  j["device_name"] = r.device_name;
  j["model"] = r.model;
  j["widths"] = r.widths;
  j["n_params"] = r.n_params;
  j["world_size"] = r.world_size;
  j["n_nodes"] = r.n_nodes;
  j["global_batch"] = r.global_batch;
  j["local_batch"] = r.local_batch;
  j["dataset"] = r.dataset;
  j["n_samples"] = r.n_samples;
  j["epochs"] = r.epochs;
  j["steps_per_epoch"] = r.steps_per_epoch;
  j["steps"] = r.steps;
  j["lr"] = r.lr;
  j["seed"] = r.seed;
  j["threads"] = r.threads;
  j["epoch_times_s"] = r.epoch_times_s;
  j["avg_epoch_s"] = r.avg_epoch_s;
  j["throughput_samples_per_s"] = r.throughput_samples_per_s;
  j["losses"] = r.losses;
  j["loss_global"] = r.loss_global;
  j["loss_rank0"] = r.loss_rank0;
  j["test_accuracy"] = opt(r.test_accuracy);
  j["comm"] = r.comm;
  j["allreduce"] = r.allreduce;
  j["link"] = r.link;
  j["link_alpha_us"] = opt(r.link_alpha_us);
  j["link_gbps"] = opt(r.link_gbps);
  j["link_dilation"] = r.link_dilation;
  j["comm_s"] = opt(r.comm_s);
  j["exposed_comm_s"] = opt(r.exposed_comm_s);
  j["comm_busy_s"] = opt(r.comm_busy_s);
  j["compute_s"] = r.compute_s;
  j["allreduce_calls_per_step"] = r.allreduce_calls_per_step;
  j["allreduce_bytes_per_step"] = r.allreduce_bytes_per_step;
  j["bucket_cap_mb"] = opt(r.bucket_cap_mb);
  j["first_bucket_mb"] = opt(r.first_bucket_mb);
  j["n_buckets"] = opt(r.n_buckets);
  j["bucket_bytes"] = r.bucket_bytes;
  j["per_rank_epoch_s"] = r.per_rank_epoch_s;
  j["mpi_library"] = r.mpi_library;
  j["nccl_version"] = r.nccl_version;
  j["version"] = r.version;
  j["timestamp"] = r.timestamp;
  return j;
}

RunRecord record_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("record is not a JSON object");
  RunRecord r;
  get(j, "schema", r.schema);
  if (r.schema != kResultSchema) throw std::runtime_error("record schema '" + r.schema + "' is not " + kResultSchema);
  get(j, "mode", r.mode);
  get(j, "backend", r.backend);
  get(j, "device_name", r.device_name);
  get(j, "model", r.model);
  get(j, "widths", r.widths);
  get(j, "n_params", r.n_params);
  get(j, "world_size", r.world_size);
  get(j, "n_nodes", r.n_nodes);
  get(j, "global_batch", r.global_batch);
  get(j, "local_batch", r.local_batch);
  get(j, "dataset", r.dataset);
  get(j, "n_samples", r.n_samples);
  get(j, "epochs", r.epochs);
  get(j, "steps_per_epoch", r.steps_per_epoch);
  get(j, "steps", r.steps);
  get(j, "lr", r.lr);
  get(j, "seed", r.seed);
  get(j, "threads", r.threads);
  get(j, "epoch_times_s", r.epoch_times_s);
  get(j, "avg_epoch_s", r.avg_epoch_s);
  get(j, "throughput_samples_per_s", r.throughput_samples_per_s);
  get(j, "losses", r.losses);
  get(j, "loss_global", r.loss_global);
  get(j, "loss_rank0", r.loss_rank0);
  get_opt(j, "test_accuracy", r.test_accuracy);
  get(j, "comm", r.comm);
  get(j, "allreduce", r.allreduce);
  get(j, "link", r.link);
  get_opt(j, "link_alpha_us", r.link_alpha_us);
  get_opt(j, "link_gbps", r.link_gbps);
  get(j, "link_dilation", r.link_dilation);
  get_opt(j, "comm_s", r.comm_s);
  get_opt(j, "exposed_comm_s", r.exposed_comm_s);
  get_opt(j, "comm_busy_s", r.comm_busy_s);
  get(j, "compute_s", r.compute_s);
  get(j, "allreduce_calls_per_step", r.allreduce_calls_per_step);
  get(j, "allreduce_bytes_per_step", r.allreduce_bytes_per_step);
  get_opt(j, "bucket_cap_mb", r.bucket_cap_mb);
  get_opt(j, "first_bucket_mb", r.first_bucket_mb);
  get_opt(j, "n_buckets", r.n_buckets);
  get(j, "bucket_bytes", r.bucket_bytes);
  get(j, "per_rank_epoch_s", r.per_rank_epoch_s);
  get(j, "mpi_library", r.mpi_library);
  get(j, "nccl_version", r.nccl_version);
  get(j, "version", r.version);
  get(j, "timestamp", r.timestamp);
  return r;
}

std::string format_results_line(const RunRecord& r) { return kResultPrefix + to_json(r).dump(); }

std::optional<nlohmann::json> find_results_json(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  const std::string prefix = kResultPrefix;
  while (std::getline(in, line)) {
    const auto at = line.find(prefix);
    if (at == std::string::npos) continue;
    try {
      auto j = nlohmann::json::parse(line.substr(at + prefix.size()));
      if (j.is_object()) return j;
    } catch (const nlohmann::json::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace dpscale
