// sweep_line.h — one line of a sweep's JSONL file (docs/RESULTS_FORMAT.md, "The sweep line"):
// the trainer record's fields at top level plus status, reason, point, run and system.
//
// Writing and reading live together so the two cannot drift; the record's own fields come from
// contract/record.h (to_json / record_from_json), never re-declared here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/machine_fingerprint.h"
#include "harness/point/point.h"
#include "harness/results/machine_state.h"
#include "contract/record.h"

namespace dpscale {

// Run metadata: the "run" object.
struct RunInfo {
  std::string config;
  std::string run_id;
  std::vector<std::string> argv;
  std::string host;
  std::string git_version;
  std::string start_time;  // UTC, ISO 8601
  double duration_s = 0.0;
  int attempt = 0;          // 0 the first run of this run id; 1.. reruns of a disturbed one
  std::string config_hash;  // config_hash() of the sweep's config; "" in lines of older sweeps
};

// One parsed line.
struct SweepEntry {
  int line_no = 0;                 // 1-based, for messages
  bool ok = false;                 // status "ok"
  std::string reason;              // failed lines
  Point point;                     // the line's point, its settings read from run.argv
  int repeat = 0;                  // point.repeat: the round, 0-based
  RunInfo run;
  std::optional<RunRecord> record; // ok lines
  MachineFingerprint machine;      // from `system`
  std::optional<MachineState> state;  // `system.state`: lines of sweeps that recorded it
};

// The line for a finished run (`record` set) or a failed one (`reason` set); `system` is the
// sweep's description of the machine (system_info.h).
// The line's point is the run's point without its settings (Point::to_json): they are the flags
// of `run.argv`, written once. Where the run's arguments say otherwise than its point (dpscale ab
// gives every run the one link dilation it measured for the session, the point keeping the
// config's auto:TFLOPS), the point carries its settings, which reading the line then takes.
nlohmann::ordered_json make_sweep_line(const Point& point, int repeat, const RunInfo& run, const nlohmann::ordered_json& system,
                                       const std::optional<RunRecord>& record, const std::string& reason);

// Parses one line's JSON. A bare trainer record (a RESULTS_JSON object with no "point") is also
// accepted: its point is taken from the record (Point::of_record). Throws std::runtime_error
// saying what is wrong.
SweepEntry parse_sweep_line(const nlohmann::json& j);

}  // namespace dpscale
