// sweep_line.cpp — build and parse sweep lines.
#include "harness/sweep/sweep_line.h"

#include <stdexcept>
#include <type_traits>

#include "contract/record_values.h"
#include "core/json_int.h"
#include "models/mlp_spec.h"

namespace dpscale {

namespace {

using nlohmann::json;

nlohmann::ordered_json point_json(const SweepPoint& p) {
  nlohmann::ordered_json j;
  j["model"] = p.model;
  j["mode"] = p.mode;
  j["world_size"] = p.world_size;
  j["bucket_cap_mb"] = p.bucket_cap_mb ? json(*p.bucket_cap_mb) : json(nullptr);
  j["link"] = p.link;
  if (p.nodes > 0) {
    j["nodes"] = p.nodes;
    j["ranks_per_node"] = p.ranks_per_node;
  }
  if (!p.axes.empty()) {
    nlohmann::ordered_json axes = nlohmann::ordered_json::object();
    for (const auto& [key, value] : p.axes) axes[key] = value;
    j["axes"] = axes;
  }
  j["repeat"] = p.repeat;
  return j;
}

template <class T>
T field(const json& obj, const char* parent, const char* key) {
  if (!obj.contains(key)) throw std::runtime_error(std::string("'") + parent + "' has no field '" + key + "'");
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!json_integer_fits<T>(obj.at(key))) {
      throw std::runtime_error(std::string("'") + parent + "." + key + "' has the wrong type (want an integer in range)");
    }
  }
  try {
    return obj.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::runtime_error(std::string("'") + parent + "." + key + "' has the wrong type");
  }
}

}  // namespace

nlohmann::ordered_json make_sweep_line(const SweepPoint& p, const RunInfo& run, const nlohmann::ordered_json& system,
                                       const std::optional<RunRecord>& record, const std::string& reason) {
  nlohmann::ordered_json line;
  line["status"] = record ? "ok" : "failed";
  if (!record) line["reason"] = reason;
  line["point"] = point_json(p);
  if (record) {
    const nlohmann::ordered_json rec = to_json(*record);
    for (auto it = rec.begin(); it != rec.end(); ++it) line[it.key()] = *it;
  }
  nlohmann::ordered_json r;
  r["config"] = run.config;
  r["run_id"] = run.run_id;
  r["argv"] = run.argv;
  r["host"] = run.host;
  r["git_version"] = run.git_version;
  r["start_time"] = run.start_time;
  r["duration_s"] = run.duration_s;
  if (!run.config_hash.empty()) r["config_hash"] = run.config_hash;
  if (run.attempt > 0) r["attempt"] = run.attempt;
  line["run"] = r;
  line["system"] = system;
  return line;
}

SweepPoint point_from_record(const RunRecord& r) {
  SweepPoint p;
  p.model = r.model == "custom" ? widths_to_string(r.widths) : r.model;
  p.mode = r.mode;
  p.world_size = r.world_size;
  p.bucket_cap_mb = r.bucket_cap_mb;  // null but in a bucketed record
  p.link = r.link;                    // "none" in a single-device record
  return p;
}

SweepEntry parse_sweep_line(const json& j) {
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  SweepEntry e;
  if (!j.contains("point")) {
    // A bare trainer record, e.g. RESULTS_JSON lines collected by hand.
    if (!j.contains("schema")) throw std::runtime_error("neither a sweep line (no 'point') nor a trainer record");
    e.record = record_from_json(j);
    check_record_values(*e.record);
    e.ok = true;
    e.point = point_from_record(*e.record);
    return e;
  }
  const std::string status = field<std::string>(j, "line", "status");
  if (status != "ok" && status != "failed") throw std::runtime_error("'status' is '" + status + "', not ok or failed");
  e.ok = status == "ok";
  const json& p = j.at("point");
  if (!p.is_object()) throw std::runtime_error("'point' is not an object");
  e.point.model = field<std::string>(p, "point", "model");
  e.point.mode = field<std::string>(p, "point", "mode");
  e.point.world_size = field<int>(p, "point", "world_size");
  if (p.contains("bucket_cap_mb") && !p.at("bucket_cap_mb").is_null()) {
    e.point.bucket_cap_mb = field<double>(p, "point", "bucket_cap_mb");
  }
  e.point.link = field<std::string>(p, "point", "link");
  e.point.repeat = p.contains("repeat") ? field<int>(p, "point", "repeat") : 0;
  if (p.contains("nodes")) {
    e.point.nodes = field<int>(p, "point", "nodes");
    e.point.ranks_per_node = field<int>(p, "point", "ranks_per_node");
    if (e.point.nodes < 1 || e.point.ranks_per_node < 1 || e.point.nodes * e.point.ranks_per_node != e.point.world_size) {
      throw std::runtime_error("'point.nodes' x 'point.ranks_per_node' is not 'point.world_size'");
    }
  }
  if (p.contains("axes")) {
    if (!p.at("axes").is_object()) throw std::runtime_error("'point.axes' is not an object");
    for (const auto& [key, value] : p.at("axes").items()) {
      if (!find_option(key)) throw std::runtime_error("'point.axes." + key + "' is no trainer option");
      if (!value.is_string()) throw std::runtime_error("'point.axes." + key + "' has the wrong type");
      e.point.axes.emplace_back(key, value.get<std::string>());
    }
  }
  if (j.contains("run") && j.at("run").is_object()) {
    const json& r = j.at("run");
    if (r.contains("argv")) {
      // The point key's settings come from the flags the run was given (point_settings.h).
      e.run.argv = field<std::vector<std::string>>(r, "run", "argv");
      e.point.settings = settings_of_argv(e.run.argv);
    }
    if (r.contains("config")) e.run.config = field<std::string>(r, "run", "config");
    if (r.contains("run_id")) e.run.run_id = field<std::string>(r, "run", "run_id");
    if (r.contains("duration_s")) e.run.duration_s = field<double>(r, "run", "duration_s");
    if (r.contains("start_time")) e.run.start_time = field<std::string>(r, "run", "start_time");
    if (r.contains("config_hash")) e.run.config_hash = field<std::string>(r, "run", "config_hash");
    if (r.contains("attempt")) e.run.attempt = field<int>(r, "run", "attempt");
    if (e.run.attempt < 0) throw std::runtime_error("'run.attempt' is negative");
  }
  if (j.contains("system") && j.at("system").is_object()) {
    const json& s = j.at("system");
    e.machine.known = true;
    if (s.contains("cpu_model")) e.machine.cpu_model = field<std::string>(s, "system", "cpu_model");
    if (s.contains("cpu_count")) e.machine.cpu_count = field<int>(s, "system", "cpu_count");
    if (s.contains("gpu_model") && !s.at("gpu_model").is_null()) e.machine.gpu_model = field<std::string>(s, "system", "gpu_model");
    if (s.contains("state")) e.state = machine_state_from_json(s.at("state"));
  }
  if (e.ok) {
    e.record = record_from_json(j);
    check_record_values(*e.record);  // numbers a run can produce, before any table uses them
  } else {
    e.reason = j.contains("reason") && j.at("reason").is_string() ? j.at("reason").get<std::string>() : "unknown";
  }
  return e;
}

}  // namespace dpscale
