// report.h — `dpscale report FILE.jsonl [--format md|csv|json]`: the workshop's results table
// (model, mode, devices, params, avg epoch, comm time, throughput, speedup) plus E = S/K,
// comm %, γ and the Amdahl ceiling (analysis.h says how each is computed). Failed runs are
// listed apart. With repeats, every number is a median and the spread is shown.
// The JSON format also carries what the charts draw (plots/ reads it and computes nothing):
// spreads of every time, E, the saving against naive, bucket counts, median loss curves.
#pragma once

#include <string>

#include "harness/report/analysis.h"

namespace dpscale {

// The JSON format's schema tag (its fields: docs/RESULTS_FORMAT.md, "The report JSON").
inline constexpr const char* kReportSchema = "dpscale.report/1";

// "md" | "csv" | "json"; anything else is an InputError.
std::string render_report(const Analysis& a, const std::string& source, const std::string& format);

}  // namespace dpscale
