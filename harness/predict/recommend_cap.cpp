// recommend_cap.cpp — the cap scan over the step model.
#include "recommend_cap.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "harness/common/table.h"

namespace dpscale::predict {

std::vector<double> cap_grid() {
  std::vector<double> caps;
  for (double c = 0.25; c <= 128; c *= 2) caps.push_back(c);
  return caps;
}

void judge_caps(CapAdvice& a) {
  // Judged on the epoch, not the exposed comm alone: with contention a cap also changes compute.
  a.best = 0;
  for (size_t i = 1; i < a.rows.size(); ++i) {
    if (a.rows[i].epoch_s < a.rows[a.best].epoch_s) a.best = i;
  }
  const CapRow& b = a.rows[a.best];
  const double tol = std::max(0.05 * b.exposed_s, 0.005 * b.epoch_s);
  a.flat_lo_mb = a.flat_hi_mb = b.cap_mb;
  double worst_epoch = b.epoch_s;
  for (size_t i = a.best; i-- > 0 && a.rows[i].epoch_s <= b.epoch_s + tol;) a.flat_lo_mb = a.rows[i].cap_mb;
  for (size_t i = a.best + 1; i < a.rows.size() && a.rows[i].epoch_s <= b.epoch_s + tol; ++i) {
    a.flat_hi_mb = a.rows[i].cap_mb;
  }
  for (const CapRow& r : a.rows) worst_epoch = std::max(worst_epoch, r.epoch_s);
  a.epoch_spread = worst_epoch / b.epoch_s;
}

std::vector<CapAdvice> recommend_caps(const std::vector<SingleRun>& singles, const PredictContext& ctx,
                                      const std::vector<int>& world_sizes) {
  std::vector<CapAdvice> out;
  for (const SingleRun& s : singles) {
    for (int k : world_sizes) {
      CapAdvice a;
      a.model = s.spec.key();
      a.world_size = k;
      for (double cap : cap_grid()) {
        PredictContext c = ctx;
        c.sync.bucket_cap_mb = cap;
        const PredictRow r = predict_row(s, c, Mode::bucketed, k);
        a.rows.push_back({cap, r.p.calls_per_step, r.p.exposed_s, r.p.epoch_s});
      }
      judge_caps(a);
      out.push_back(a);
    }
  }
  return out;
}

std::string render_caps(const std::vector<CapAdvice>& advice, const PredictContext& ctx, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const CapAdvice& a : advice) {
      for (size_t i = 0; i < a.rows.size(); ++i) {
        const CapRow& r = a.rows[i];
        nlohmann::ordered_json j;
        j["model"] = a.model;
        j["mode"] = mode_name(Mode::bucketed);
        j["world_size"] = a.world_size;
        j["bucket_cap_mb"] = r.cap_mb;
        j["n_buckets"] = r.n_buckets;
        j["exposed_comm_s"] = r.exposed_s;
        j["epoch_s"] = r.epoch_s;
        j["best"] = i == a.best;
        j["recommended"] = r.cap_mb == a.recommended_mb();
        j["flat_lo_mb"] = a.flat_lo_mb;
        j["flat_hi_mb"] = a.flat_hi_mb;
        j["epoch_spread"] = a.epoch_spread;
        j["first_bucket_mb"] = ctx.sync.first_bucket_mb;
        j["link_alpha_us"] = ctx.comm.link.alpha_us;
        j["link_gbps"] = ctx.comm.link.gbps;
        j["link_dilation"] = ctx.comm.link.dilation;
        arr.push_back(j);
      }
    }
    return arr.dump(2) + "\n";
  }
  Table t;
  t.header = {"model", "K", "cap MiB", "buckets", "exposed s", "epoch s", ""};
  t.right = {false, true, true, true, true, true, false};
  const bool csv = format == "csv";
  auto num = [&](double x, int d) { return csv ? format_number(x) : fmt_fixed(x, d); };
  for (const CapAdvice& a : advice) {
    for (size_t i = 0; i < a.rows.size(); ++i) {
      const CapRow& r = a.rows[i];
      t.rows.push_back({a.model, std::to_string(a.world_size), format_number(r.cap_mb), std::to_string(r.n_buckets),
                        num(r.exposed_s, 4), num(r.epoch_s, 4), i == a.best ? "best" : ""});
    }
  }
  if (csv) return t.csv();
  std::string out = "Predicted exposed comm per epoch against the bucket cap (first bucket " +
                    format_number(ctx.sync.first_bucket_mb) + " MiB); " + std::to_string(ctx.workload.samples) +
                    " samples, batch " + std::to_string(ctx.workload.batch) + "; link " + describe_link(ctx.comm) + ".\n\n";
  out += t.markdown() + "\n";
  for (const CapAdvice& a : advice) {
    out += a.model + " K=" + std::to_string(a.world_size) + ": best cap " + format_number(a.rows[a.best].cap_mb) +
           " MiB (exposed " + fmt_fixed(a.rows[a.best].exposed_s, 4) + " s per epoch); " +
           (a.flat() ? "flat from " + format_number(a.flat_lo_mb) + " to " + format_number(a.flat_hi_mb) + " MiB" : "not flat") +
           "; use " + format_number(a.recommended_mb()) + " MiB" + (a.flat() ? " (the largest cap of the flat range: fewest calls)" : "") +
           "; worst cap's epoch " + fmt_fixed(a.epoch_spread, 3) + "× the best\n";
  }
  return out;
}

}  // namespace dpscale::predict
