// history_rows.cpp — results file → history rows (history_rows.h).
#include "harness/history/history_rows.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "contract/modes.h"
#include "core/fnv1a.h"
#include "harness/results/machine_state.h"
#include "harness/results/pairing.h"

namespace dpscale::history {

namespace {

using nlohmann::json;

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The comm time that shows in a run's epoch (the mode table's wait field) over its epoch.
json comm_share(ModeRef mode, const RunRecord& r) {
  std::optional<double> c;
  if (mode->wait_field == WaitField::comm_s) c = r.comm_s;
  if (mode->wait_field == WaitField::exposed_comm_s) c = r.exposed_comm_s;
  if (!c || !(r.avg_epoch_s > 0)) return nullptr;
  return *c / r.avg_epoch_s;
}

std::string hex64(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// What makes a run itself, wherever its line is read from: the machine, the point, the sweep's
// run id, repeat, attempt and start, and the record's own timestamp. The same line added twice
// (or from a copy of the file) has the same key; two repeats of a point never do.
std::string run_key(const SweepEntry& e, const std::string& point_key) {
  std::string id = e.machine.describe() + "\n" + point_key + "\n" + e.run.run_id + "\n" + std::to_string(e.repeat) +
                   "\n" + std::to_string(e.run.attempt) + "\n" + e.run.start_time + "\n" +
                   (e.record ? e.record->timestamp : std::string());
  return hex64(fnv1a64(id.data(), id.size()));
}

json machine_json(const MachineFingerprint& m) {
  json j;
  j["fingerprint"] = m.describe();
  j["cpu_model"] = or_null(m.cpu_model);
  j["cpu_count"] = m.known ? json(m.cpu_count) : json(nullptr);
  j["gpu_model"] = or_null(m.gpu_model);
  return j;
}

}  // namespace

std::vector<json> rows_of(const ResultsFile& f, const Revision& rev, int* failed) {
  // Disturbance is judged as the gate judges one file: against the file's usual probe.
  std::vector<const MachineState*> states;
  for (const SweepEntry& e : f.entries) {
    if (e.state) states.push_back(&*e.state);
  }
  const double usual = usual_probe(states);
  const DisturbanceLimits limits;
  std::map<const SweepEntry*, const PairedRun*> paired;
  const std::vector<PairedRun> runs = pair_runs(f, usual, limits);
  for (const PairedRun& r : runs) paired[r.entry] = &r;

  json revision;
  revision["name"] = rev.name;
  revision["commit_id"] = or_null(rev.commit_id);
  revision["commit_time"] = rev.commit_time;

  std::vector<json> rows;
  int n_failed = 0;
  for (const SweepEntry& e : f.entries) {
    if (!e.ok) {
      ++n_failed;
      continue;
    }
    const RunRecord& r = *e.record;
    const Point& key = e.point;
    json row;
    row["schema"] = kRowSchema;
    const std::string point_key = key.history_key();
    row["point_key"] = point_key;
    row["run_key"] = run_key(e, point_key);
    row["point"] = json::parse(point_key);
    row["describe"] = key.describe();
    row["curve"] = key.curve();
    row["machine"] = machine_json(e.machine);
    row["revision"] = revision;
    json run;
    run["run_id"] = or_null(e.run.run_id);
    run["repeat"] = e.repeat;
    run["attempt"] = e.run.attempt;
    run["config"] = or_null(e.run.config);
    run["started"] = or_null(e.run.start_time.empty() ? r.timestamp : e.run.start_time);
    run["build"] = or_null(r.version);
    row["run"] = run;
    row["source"] = f.path;
    json m;
    m["epoch_s"] = r.avg_epoch_s;
    m["throughput"] = r.throughput_samples_per_s;
    std::optional<double> speedup;
    std::string disturbed;
    if (const auto p = paired.find(&e); p != paired.end()) {
      speedup = p->second->speedup;
      disturbed = p->second->disturbed;
    } else if (e.state) {
      // A single run: its own state only (it pairs with nothing).
      if (const auto why = disturbance(*e.state, r.run_delay_share, usual, limits)) {
        disturbed = "round " + std::to_string(e.repeat + 1) + ": " + *why;
      }
    }
    m["speedup"] = or_null(speedup);
    m["efficiency"] = speedup ? json(*speedup / r.world_size) : json(nullptr);
    m["comm_share"] = comm_share(key.mode, r);
    m["overlap_pct"] = or_null(r.overlap_pct);
    m["run_delay_share"] = or_null(r.run_delay_share);
    row["metrics"] = m;
    row["disturbed"] = or_null(disturbed);
    row["state"] = e.state ? json::parse(to_json(*e.state).dump()) : json(nullptr);
    rows.push_back(std::move(row));
  }
  if (failed) *failed = n_failed;
  return rows;
}

}  // namespace dpscale::history
