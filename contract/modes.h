// modes.h — the four ways dpscale trains, in one table: the name a config and a record use, the
// executable that runs it, its label in tables and charts, its --help description, and which
// record field its communication wait fills.
//
// Everything that needs to know about modes asks this table: the trainers (their help text, the
// record), the harness (config validation, launching, the report) and, through
// `dpscale schema --format json`, the plotter. A new mode is one row here plus its GradSync.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dpscale {

enum class Mode { single, naive, interleaved, bucketed, sharded };

// Where a data-parallel trainer's measured wait (GradSync::take_wait_seconds) goes:
//   comm_s          naive: the blocking all-reduce phase, all of the communication
//   exposed_comm_s  interleaved/bucketed: only the part of the communication that did not hide
//                   behind backward (finish() waited for it)
enum class WaitField { none, comm_s, exposed_comm_s };

struct ModeInfo {
  Mode mode;
  const char* name;         // "bucketed": configs, records, run ids
  const char* executable;   // "train_ddp_bucketed"
  const char* label;        // "Bucketed DDP": report tables
  const char* description;  // first line of --help
  bool data_parallel;       // launched by mpirun with K ranks, has a communicator
  WaitField wait_field;
};

// Every mode, in the workshop's table order (single, naive, interleaved, bucketed).
const std::vector<ModeInfo>& all_modes();
const ModeInfo& mode_info(Mode m);
// nullptr for a name that is no mode.
const ModeInfo* find_mode(std::string_view name);
// The mode's label in tables ("Single", "Naive DP", "Interleaved", "Bucketed DDP"); a name that
// is no mode is shown as it is.
std::string mode_label(std::string_view name);
// The named mode; InputError "unknown mode 'x' (use single, naive, interleaved or bucketed)".
const ModeInfo& mode_named(std::string_view name);
// "single | naive | interleaved | bucketed"
std::string mode_names(const char* separator = " | ");

const char* mode_name(Mode m);
const char* wait_field_name(WaitField f);  // "none" | "comm_s" | "exposed_comm_s"

// A mode as a value: the table's row itself, so whoever holds one asks it (`m->data_parallel`,
// `m->executable`) instead of turning a name back into the row. Equal when the row is; a run's
// point holds one (harness/point/point.h).
class ModeRef {
 public:
  ModeRef(Mode m = Mode::single) : info_(&mode_info(m)) {}  // NOLINT: a Mode is a ModeRef
  // The named mode; InputError as mode_named's for a name that is no mode.
  static ModeRef named(std::string_view name) { return mode_named(name).mode; }

  const ModeInfo* operator->() const { return info_; }
  const ModeInfo& info() const { return *info_; }
  Mode id() const { return info_->mode; }
  const char* name() const { return info_->name; }

  bool operator==(const ModeRef& o) const { return info_ == o.info_; }
  bool operator==(Mode m) const { return info_->mode == m; }

 private:
  const ModeInfo* info_;
};

}  // namespace dpscale
