// predict_table.h — the prediction rows model × mode × K and their renderings.
//
// Per row (epoch seconds from step_model.h):
//   speedup  S = T(1) / T(K), T(1) the (predicted = measured) single-device epoch at this workload
//   E        S / K
//   γ        naive comm / compute at this K (textbook 15.9: t_comm / t_compute)
//   amdahl   the workshop's ceiling: f = T(1) / (T(1) + naive comm(K)), S_max = 1 / ((1 - f) + f / K)
//   knee     per (model, mode, cap): the first K of the list with E < 0.8 (none: null)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration.h"
#include "step_model.h"

namespace dpscale::predict {

inline constexpr double kKneeEfficiency = 0.8;

struct PredictRow {
  std::string model, mode;
  int world_size = 1;
  std::optional<double> bucket_cap_mb;  // bucketed only
  EpochPrediction p;
  double single_epoch_s = 0;
  double speedup = 0, efficiency = 0, gamma = 0, amdahl_max = 0;
  std::optional<int> knee;
};

// What every row was computed with, printed above the table and put in each JSON row.
struct PredictContext {
  Workload workload;
  SyncSetup sync;  // mode is per row; caps and fused here
  CommModel comm;
  std::string compute_source;  // "--from x.jsonl" / "--single ..."
  std::string link_source;     // "preset pcie4" / "fitted to FILE (native, 12 rows, rms 8%)"
  MachineTerms terms;          // --calibrate's (machine_fit.h); zero: the bare α-β model
  std::string terms_source;    // describe_fits() lines, or ""
  std::string busy;            // why the runs it was made from were not fit to judge ("": they were)
};

PredictRow predict_row(const SingleRun& s, const PredictContext& ctx, Mode mode, int k);
std::vector<PredictRow> predict_rows(const std::vector<SingleRun>& singles, const PredictContext& ctx,
                                     const std::vector<Mode>& modes, const std::vector<int>& world_sizes);

// md | csv | json (the JSON: a list of row objects).
std::string render_rows(const std::vector<PredictRow>& rows, const PredictContext& ctx, const std::string& format);

// "pcie4 (α 10 µs, 25 GB/s), dilation ×155.6, ring all-reduce" for the line above a table.
std::string describe_link(const CommModel& comm);
// Four significant digits: fitted and measured values print as 54.52, not 54.51909337875028.
std::string sig4(double v);

}  // namespace dpscale::predict
