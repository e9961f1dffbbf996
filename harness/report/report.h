// report.h — `dpscale report FILE.jsonl [--format md|csv|json]`: the workshop's results table
// (model, mode, devices, params, avg epoch, comm time, throughput, speedup) plus E = S/K,
// comm %, γ and the Amdahl ceiling (analysis.h says how each is computed). Failed runs are
// listed apart. With repeats, every number is a median and the spread is shown.
// The JSON format also carries what the charts draw (plots/ reads it and computes nothing):
// spreads of every time, E, the saving against naive, bucket counts, median loss curves.
#pragma once

#include <string>
#include <vector>

#include "harness/report/analysis.h"

namespace dpscale {

// The JSON format's schema tag (its fields: docs/RESULTS_FORMAT.md, "The report JSON").
inline constexpr const char* kReportSchema = "dpscale.report/2";

// "md" | "csv" | "json"; anything else is an InputError.
std::string render_report(const Analysis& a, const std::string& source, const std::string& format);

// The columns a table of points shows for their keys beside the model, the mode and K: the cap
// and the link whenever a point has one (the workshop's table names them), the placement where
// one was asked for, and every other setting the points differ in.
struct KeyColumns {
  bool cap = false, link = false, placement = false;
  std::vector<std::string> settings;  // varying_settings() but the cap and the link
};
KeyColumns key_columns(const std::vector<Point>& points);
// Those columns' headers ("Cap MB", "Link", "Nodes×Ranks", then the settings' keys) and a point's
// cells in them ("—" where its mode takes no such option).
std::vector<std::string> key_headers(const KeyColumns& c);
std::vector<std::string> key_cells(const Point& p, const KeyColumns& c);

}  // namespace dpscale
