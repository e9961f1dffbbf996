// recommend_cap.h — `dpscale predict --recommend-cap`: the step model's exposed comm per DDP bucket
// cap, 0.25 to 128 MiB (doubling), for each (model, K) on the given link; the best cap, and how
// flat the optimum is.
//
//   best cap   the cap with the shortest predicted epoch (ties: the smallest cap, which starts
//              reducing earliest)
//   flat range the caps next to it whose epoch is within max(5% of the best cap's exposed comm,
//              0.5% of its epoch) of it: "anything from 2 to 16 MiB does"
//   spread     worst / best epoch across the caps: how much the choice matters at all
//   advice     the largest cap of the flat range: the same time with the fewest all-reduce calls
//              (where the range is one cap, that cap)
#pragma once

#include <string>
#include <vector>

#include "predict_table.h"

namespace dpscale::predict {

std::vector<double> cap_grid();  // 0.25, 0.5, ..., 128

struct CapRow {
  double cap_mb = 0;
  int n_buckets = 0;
  double exposed_s = 0, epoch_s = 0;  // per epoch
};

struct CapAdvice {
  std::string model;
  int world_size = 0;
  std::vector<CapRow> rows;
  size_t best = 0;
  double flat_lo_mb = 0, flat_hi_mb = 0;
  double epoch_spread = 1;  // worst epoch / best epoch
  double recommended_mb() const { return flat_hi_mb; }
  bool flat() const { return flat_lo_mb < flat_hi_mb; }
};

// The advice over the given caps (ascending) from their predicted rows (flat range, best, spread).
void judge_caps(CapAdvice& a);

std::vector<CapAdvice> recommend_caps(const std::vector<SingleRun>& singles, const PredictContext& ctx,
                                      const std::vector<int>& world_sizes);
std::string render_caps(const std::vector<CapAdvice>& advice, const PredictContext& ctx, const std::string& format);

}  // namespace dpscale::predict
