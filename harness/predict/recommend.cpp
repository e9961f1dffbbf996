// recommend.cpp — mode, cap, 2-byte gradients and accumulation, each with its predicted gain.
#include "recommend.h"

#include <nlohmann/json.hpp>

#include "contract/option_values.h"
#include "harness/common/table.h"
#include "recommend_cap.h"

namespace dpscale::predict {

std::vector<Recommendation> recommend(const std::vector<SingleRun>& singles, const PredictContext& ctx,
                                      const std::vector<int>& world_sizes) {
  std::vector<Recommendation> out;
  const std::vector<CapAdvice> caps = recommend_caps(singles, ctx, world_sizes);
  size_t cell = 0;
  for (const SingleRun& s : singles) {
    for (int k : world_sizes) {
      const CapAdvice& advice = caps[cell++];
      Recommendation r;
      r.model = s.spec.key();
      r.world_size = k;
      PredictContext best = ctx;
      bool have = false;
      for (Mode m : table_modes()) {
        PredictContext c = ctx;
        c.sync.bucket_cap_mb = advice.recommended_mb();
        const PredictRow row = predict_row(s, c, m, k);
        if (!have || row.p.epoch_s < r.epoch_s * (1 - 1e-9)) {
          have = true;
          r.mode = m;
          r.epoch_s = row.p.epoch_s;
          r.speedup = row.speedup;
          r.cap_mb = m == Mode::bucketed ? advice.recommended_mb() : 0;
          best = c;
        }
      }
      PredictContext half = best;
      half.sync.grad_format = GradFormat::bf16;
      r.two_byte_gain = r.epoch_s / predict_row(s, half, r.mode, k).p.epoch_s - 1;
      for (int a : {2, 4, 8}) {
        PredictContext acc = best;
        acc.sync.accum_steps = a;
        // Per sample: an accumulated epoch has A times fewer optimizer steps over the same samples.
        const double gain = r.epoch_s / predict_row(s, acc, r.mode, k).p.epoch_s - 1;
        if (gain > r.accum_gain) r.accum_gain = gain, r.best_accum = a;
      }
      out.push_back(r);
    }
  }
  return out;
}

std::string render_recommendations(const std::vector<Recommendation>& recs, const PredictContext& ctx,
                                   const std::string& format) {
  auto pays = [](double g) { return g >= kPaysAbove; };
  if (format == "json") {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const Recommendation& r : recs) {
      arr.push_back({{"model", r.model}, {"world_size", r.world_size}, {"mode", mode_name(r.mode)},
                     {"bucket_cap_mb", r.mode == Mode::bucketed ? nlohmann::ordered_json(r.cap_mb) : nlohmann::ordered_json(nullptr)},
                     {"epoch_s", r.epoch_s}, {"speedup", r.speedup}, {"two_byte_gain", r.two_byte_gain},
                     {"two_byte_pays", pays(r.two_byte_gain)}, {"accum_steps", r.best_accum},
                     {"accum_gain", r.accum_gain}, {"accum_pays", pays(r.accum_gain)}});
    }
    return arr.dump(2) + "\n";
  }
  Table t;
  t.header = {"model", "K", "mode", "cap MiB", "epoch s", "speedup", "2-byte grads", "accumulation"};
  t.right = {false, true, false, true, true, true, false, false};
  const bool csv = format == "csv";
  auto verdict = [&](double g, const std::string& what) {
    return csv ? format_number(g) : fmt_signed_percent(g) + (pays(g) ? " pays" : " no") + (what.empty() ? "" : " (" + what + ")");
  };
  for (const Recommendation& r : recs) {
    t.rows.push_back({r.model, std::to_string(r.world_size), mode_name(r.mode),
                      r.mode == Mode::bucketed ? format_number(r.cap_mb) : "", csv ? format_number(r.epoch_s) : fmt_fixed(r.epoch_s, 4),
                      csv ? format_number(r.speedup) : fmt_fixed(r.speedup, 2) + "x", verdict(r.two_byte_gain, ""),
                      verdict(r.accum_gain, r.accum_gain > 0 ? "--accum-steps " + std::to_string(r.best_accum) : "")});
  }
  if (csv) return t.csv();
  std::string out = "Recommended setup per model and K: " + std::to_string(ctx.workload.samples) + " samples, batch " +
                    std::to_string(ctx.workload.batch) + "; link " + describe_link(ctx.comm) + ".\n";
  if (!ctx.terms_source.empty()) out += ctx.terms_source;
  out += "Gains are the predicted epoch's: 2-byte gradients halve every all-reduce (conversions and the loss not modelled); "
         "accumulation sends one all-reduce per A micro-batches (the optimizer then sees A·B samples a step). "
         "An option pays at a gain of 3% or more.\n\n";
  return out + t.markdown();
}

}  // namespace dpscale::predict
