// sweep_line.cpp — build and parse sweep lines.
#include "harness/results/sweep_line.h"

#include <stdexcept>

#include "contract/record_values.h"
#include "core/json_int.h"

namespace dpscale {

using nlohmann::json;

nlohmann::ordered_json make_sweep_line(const Point& q, int repeat, const RunInfo& run, const nlohmann::ordered_json& system,
                                       const std::optional<RunRecord>& record, const std::string& reason) {
  nlohmann::ordered_json line;
  line["status"] = record ? "ok" : "failed";
  if (!record) line["reason"] = reason;
  // The settings are the argv's flags, written once, unless the run was given other values
  // than its point's (a dilation resolved for a whole session: the point keeps the config's).
  Point of_argv = q;
  of_argv.settings = settings_of_argv(run.argv);
  const bool argv_is_point = of_argv.beside(q.mode, q.world_size) == q;  // options the mode does not take dropped
  line["point"] = q.to_json(!argv_is_point);
  line["point"]["repeat"] = repeat;
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

SweepEntry parse_sweep_line(const json& j) {
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  SweepEntry e;
  if (!j.contains("point")) {
    // A bare trainer record, e.g. RESULTS_JSON lines collected by hand.
    if (!j.contains("schema")) throw std::runtime_error("neither a sweep line (no 'point') nor a trainer record");
    e.record = record_from_json(j);
    check_record_values(*e.record);
    e.ok = true;
    e.point = Point::of_record(*e.record);
    return e;
  }
  const std::string status = json_field<std::string>(j, "line", "status");
  if (status != "ok" && status != "failed") throw std::runtime_error("'status' is '" + status + "', not ok or failed");
  e.ok = status == "ok";
  if (j.contains("run") && j.at("run").is_object()) {
    const json& r = j.at("run");
    // The point's settings are the flags the run was given (harness/point/point.h).
    if (r.contains("argv")) e.run.argv = json_field<std::vector<std::string>>(r, "run", "argv");
    if (r.contains("config")) e.run.config = json_field<std::string>(r, "run", "config");
    if (r.contains("run_id")) e.run.run_id = json_field<std::string>(r, "run", "run_id");
    if (r.contains("duration_s")) e.run.duration_s = json_field<double>(r, "run", "duration_s");
    if (r.contains("start_time")) e.run.start_time = json_field<std::string>(r, "run", "start_time");
    if (r.contains("config_hash")) e.run.config_hash = json_field<std::string>(r, "run", "config_hash");
    if (r.contains("attempt")) e.run.attempt = json_field<int>(r, "run", "attempt");
    if (e.run.attempt < 0) throw std::runtime_error("'run.attempt' is negative");
  }
  const json& p = j.at("point");
  e.point = Point::from_json(p, e.run.argv);
  e.repeat = p.contains("repeat") ? json_field<int>(p, "point", "repeat") : 0;
  if (j.contains("system") && j.at("system").is_object()) {
    const json& s = j.at("system");
    e.machine.known = true;
    if (s.contains("cpu_model")) e.machine.cpu_model = json_field<std::string>(s, "system", "cpu_model");
    if (s.contains("cpu_count")) e.machine.cpu_count = json_field<int>(s, "system", "cpu_count");
    if (s.contains("gpu_model") && !s.at("gpu_model").is_null()) e.machine.gpu_model = json_field<std::string>(s, "system", "gpu_model");
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
