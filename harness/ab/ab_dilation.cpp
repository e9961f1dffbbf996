// ab_dilation.cpp — the session's one link dilation, measured before the first round (ab_dilation.h).
#include "harness/ab/ab_dilation.h"

#include <algorithm>
#include <memory>
#include <sstream>
#include <tuple>
#include <vector>

#include "contract/link_model.h"
#include "contract/modes.h"
#include "harness/common/table.h"
#include "harness/sweep/sweep.h"
#include "models/device.h"
#include "models/gemm/gemm_probe.h"
#include "models/gemm/step_gemms.h"
#include "models/model_spec.h"

namespace dpscale {

namespace {

// The options a run's trainer reads from its arguments, read as the trainer reads them.
TrainOptions options_of(const SweepRun& run) {
  std::vector<std::string> words = {run.point.mode->executable};
  words.insert(words.end(), run.args.begin(), run.args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  TrainOptions o;
  parse_options(static_cast<int>(argv.size()), argv.data(), run.point.mode.id(), o);
  return o;
}

// F as its run's argument: a tenth of a percent of it at least, never in exponent form.
std::string factor_text(double f) { return fmt_fixed(f, f >= 100 ? 1 : f >= 1 ? 3 : 6); }

}  // namespace

SessionDilation fix_session_dilation(const SweepConfig& c, int probes) {
  SessionDilation out;
  if (c.link == "none") return out;
  const DilationSpec spec = parse_dilation(c.link_dilation);
  if (spec.auto_tflops <= 0) return out;
  if (c.backend != "cpu") {
    out.line = "link dilation " + c.link_dilation + ": each run probes its own device (backend " + c.backend +
               "; only the CPU backend's rate is measured once for the session)";
    return out;
  }
  set_priority(c.nice);  // the runs' own, which the session's first pass would set anyway
  using Key = std::tuple<std::string, int, int, std::string, int>;  // model, seq_len, local batch, library, threads
  std::map<Key, std::string> f_of;
  std::ostringstream how;
  for (const SweepRun& run : expand(c, 1)) {
    if (!run.point.mode->data_parallel || run.point.link() == "none") continue;
    const TrainOptions o = options_of(run);
    const int local_batch = o.batch_size / run.point.world_size;
    const Key key{o.model, o.seq_len, local_batch, o.device.gemm, o.device.threads};
    if (!f_of.count(key)) {
      // The trainers' own probe of the model (an MLP's largest layer, a transformer's largest forward GEMM).
      const ModelSpec model = parse_model_spec(o.model, o.seq_len);
      DeviceOptions d{"cpu", o.device.threads, false, 0};
      d.gemm = o.device.gemm;
      d.gemm_shapes = model.step_gemms(local_batch);
      const std::unique_ptr<Device> dev = make_device(d);
      double best = 0;
      for (int i = 0; i < probes; ++i) best = std::max(best, measure_model_gemm_flops(*dev, model, local_batch));
      const double f = spec.auto_tflops * 1e12 / best;
      f_of[key] = factor_text(f);
      how << (f_of.size() > 1 ? "; " : "") << o.model << " at local batch " << local_batch << ": F " << factor_text(f)
          << " (" << fmt_fixed(best / 1e9, 1) << " GFLOP/s, " << dev->gemm_report().info.library << ")";
    }
    out.at[run.point] = f_of[key];
  }
  if (!out.at.empty()) {
    out.line = "link dilation " + c.link_dilation + " fixed for the session, both builds alike: " + how.str() +
               ", the fastest of " + std::to_string(probes) + " probes before the first round";
  }
  return out;
}

}  // namespace dpscale
