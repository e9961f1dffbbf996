// cap_check.cpp — the cap advice against a measured cap sweep, cell by cell.
#include "cap_check.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "calibration.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "core/median.h"
#include "harness/common/table.h"
#include "harness/results/machine_state.h"
#include "harness/results/results_file.h"

namespace dpscale::predict {

CapCheck check_caps(const std::string& caps_path, const std::optional<Calibration>& calibration) {
  const RunsToCheck in = runs_to_check(caps_path, calibration);
  const MachineTerms& terms = in.terms;
  CapCheck out;
  out.path = caps_path;
  out.calibration = calibration;
  std::vector<Point> order;
  std::map<Point, std::map<double, std::vector<const SweepEntry*>>> cells;
  for (const SweepEntry& e : in.file.entries) {
    const auto cap = e.point.bucket_cap_mb();
    if (!e.ok || !e.record || !cap) continue;  // a mode that takes no cap has none to advise
    const Point key = e.point.with_default("bucket_cap_mb");
    if (!cells.count(key)) order.push_back(key);
    cells[key][*cap].push_back(&e);
  }
  for (const Point& key : order) {
    const auto& caps = cells[key];
    const SingleRun* single = in.single_for(key);
    if (!single || caps.size() < 2) continue;  // no advice to check without a single or a choice
    CapCell cell;
    cell.point = key;
    cell.predicted.model = key.model;
    cell.predicted.world_size = key.world_size;
    // One dilation for the whole cell (the median of its runs'): advice is given before any run,
    // so each cap's own measured F must not steer it.
    std::vector<double> dilations;
    for (const auto& [cap, es] : caps) {
      for (const SweepEntry* e : es) dilations.push_back(e->record->link_dilation);
    }
    const double dilation = median(dilations);
    for (const auto& [cap, es] : caps) {  // ascending caps
      std::vector<double> measured;
      for (const SweepEntry* e : es) {
        measured.push_back(e->record->avg_epoch_s);
        if (e->state && e->state->disturbed) cell.disturbed = true;
      }
      RunRecord r = *es.front()->record;
      r.link_dilation = dilation;
      const EpochPrediction p = predict_recorded(*single, r, terms);
      cell.predicted.rows.push_back({cap, p.calls_per_step, p.exposed_s, p.epoch_s});
      cell.measured_epoch_s.push_back(median(measured));
    }
    judge_caps(cell.predicted);
    for (size_t i = 0; i < cell.measured_epoch_s.size(); ++i) {
      if (cell.measured_epoch_s[i] < cell.measured_epoch_s[cell.measured_best]) cell.measured_best = i;
      if (cell.predicted.rows[i].cap_mb == cell.predicted.recommended_mb()) cell.recommended_epoch_s = cell.measured_epoch_s[i];
    }
    out.cells.push_back(cell);
  }
  if (out.cells.empty()) {
    throw InputError(caps_path + ": no bucketed point with runs at two or more caps and a single-device run of its point");
  }
  return out;
}

std::string render_cap_check(const CapCheck& c, const std::string& format) {
  int held = 0, judged = 0;
  for (const CapCell& cell : c.cells) {
    if (cell.disturbed) continue;
    ++judged;
    held += cell.holds();
  }
  if (format == "json") {
    nlohmann::ordered_json j;
    j["results"] = c.path;
    j["calibration"] = c.calibration ? nlohmann::ordered_json(c.calibration->path) : nlohmann::ordered_json(nullptr);
    j["tolerance"] = kCapTolerance;
    j["cells_holding"] = held;
    j["cells_judged"] = judged;
    j["cells"] = nlohmann::ordered_json::array();
    for (const CapCell& cell : c.cells) {
      const CapRow& best = cell.predicted.rows[cell.measured_best];
      j["cells"].push_back({{"point", cell.point.to_json()}, {"describe", cell.point.describe()},
                            {"recommended_cap_mb", cell.predicted.recommended_mb()},
                            {"flat_lo_mb", cell.predicted.flat_lo_mb}, {"flat_hi_mb", cell.predicted.flat_hi_mb},
                            {"recommended_measured_epoch_s", cell.recommended_epoch_s},
                            {"best_measured_cap_mb", best.cap_mb},
                            {"best_measured_epoch_s", cell.measured_epoch_s[cell.measured_best]}, {"gap", cell.gap()},
                            {"holds", cell.holds()}, {"disturbed", cell.disturbed}});
    }
    return j.dump(2) + "\n";
  }
  Table t;
  t.header = {"model", "K", "link", "advice MiB", "flat range MiB", "its epoch s", "best measured MiB", "best epoch s",
              "gap", "within 3%"};
  t.right = {false, true, false, true, false, true, true, true, true, false};
  const bool csv = format == "csv";
  for (const CapCell& cell : c.cells) {
    const CapAdvice& a = cell.predicted;
    t.rows.push_back({cell.point.model, std::to_string(cell.point.world_size), cell.point.link(), format_number(a.recommended_mb()),
                      a.flat() ? format_number(a.flat_lo_mb) + "-" + format_number(a.flat_hi_mb) : "not flat",
                      csv ? format_number(cell.recommended_epoch_s) : fmt_fixed(cell.recommended_epoch_s, 3),
                      format_number(a.rows[cell.measured_best].cap_mb),
                      csv ? format_number(cell.measured_epoch_s[cell.measured_best])
                          : fmt_fixed(cell.measured_epoch_s[cell.measured_best], 3),
                      csv ? format_number(cell.gap()) : fmt_signed_percent(cell.gap()),
                      std::string(cell.holds() ? "yes" : "no") + (cell.disturbed ? " (disturbed)" : "")});
  }
  if (csv) return t.csv();
  std::string out;
  if (c.calibration) out += describe_fits(*c.calibration) + "\n";
  out += "Cap advice against the measured cap sweep " + c.path +
         " (median epoch seconds per cap; the advice: the largest cap of the predicted flat range).\n\n";
  out += t.markdown();
  out += "\n" + std::to_string(held) + " of " + std::to_string(judged) +
         " cells within 3% of the best measured cap (cells with a disturbed run not counted)\n";
  return out;
}

}  // namespace dpscale::predict
