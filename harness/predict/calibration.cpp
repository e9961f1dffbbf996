// calibration.cpp — single-device epochs from the command line or a results file; α and β
// fitted to bench_allreduce's JSON.
#include "calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "contract/allreduce_algo.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "core/median.h"
#include "harness/results/results_file.h"

namespace dpscale::predict {

ModelSpec model_of_record(const RunRecord& r) {
  if (r.seq_len > 0 || is_gpt_model(r.model)) return parse_model_spec(r.model, r.seq_len);
  ModelSpec s;
  s.name = r.model;
  s.widths = r.widths;
  return s;
}

std::string single_key(const ModelSpec& spec) {
  return spec.is_gpt() ? spec.key() + " seq " + std::to_string(spec.seq_len()) : spec.key();
}

std::vector<SingleRun> parse_single_arg(const std::string& text, const Workload& w) {
  std::vector<SingleRun> out;
  std::istringstream in(text);
  for (std::string piece; std::getline(in, piece, ',');) {
    const auto eq = piece.find('=');
    if (eq == std::string::npos) {
      throw OptionError("--single", "'" + piece + "' is not MODEL=SECONDS (e.g. small=0.0361)");
    }
    const std::string name = piece.substr(0, eq);
    std::vector<std::string> presets = preset_names();
    presets.insert(presets.end(), gpt_preset_names().begin(), gpt_preset_names().end());
    if (std::find(presets.begin(), presets.end(), name) == presets.end()) {
      throw OptionError("--single", "unknown model '" + name + "' (use " + or_list(presets) + ")");
    }
    SingleRun r;
    r.spec = parse_model_spec(name, w.seq_len);
    try {
      r.epoch_s = parse_real(piece.substr(eq + 1), {0.0, false});
    } catch (const ValueError& e) {
      throw OptionError("--single", "seconds of '" + name + "' " + e.what());
    }
    r.samples = w.samples;
    r.batch = w.batch;
    for (const SingleRun& o : out) {
      if (o.spec.name == name) throw OptionError("--single", "'" + name + "' is given twice");
    }
    out.push_back(r);
  }
  if (out.empty()) throw OptionError("--single", "names no model (e.g. small=0.0361)");
  return out;
}

std::vector<SingleRun> singles_from_results(const std::string& path) {
  const ResultsFile f = read_results(path);
  refuse_gpu_shared(f, "dpscale predict");
  std::vector<SingleRun> out;
  std::map<std::string, std::vector<double>> epochs;  // by single_key
  for (const SweepEntry& e : f.entries) {
    if (!e.ok || !e.record || e.point.mode->data_parallel) continue;
    const RunRecord& r = *e.record;
    const ModelSpec spec = model_of_record(r);
    const std::string key = single_key(spec);
    if (!epochs.count(key)) {
      SingleRun s;
      s.spec = spec;
      s.samples = r.n_samples;
      s.batch = r.global_batch;
      out.push_back(s);
    }
    epochs[key].push_back(r.avg_epoch_s);
  }
  if (out.empty()) throw InputError(path + ": no successful single-device run to calibrate compute from");
  for (SingleRun& s : out) {
    s.epoch_s = median(epochs[single_key(s.spec)]);
  }
  return out;
}

std::map<Point, SingleRun> singles_by_point(const ResultsFile& f, const std::function<bool(const SweepEntry&)>& take) {
  std::map<Point, SingleRun> out;
  std::map<Point, std::vector<double>> epochs;
  for (const SweepEntry& e : f.entries) {
    if (!e.ok || !e.record || e.point.mode->data_parallel || (take && !take(e))) continue;
    const RunRecord& r = *e.record;
    if (!out.count(e.point)) out[e.point] = SingleRun{model_of_record(r), 0, r.n_samples, r.global_batch};
    epochs[e.point].push_back(r.avg_epoch_s);
  }
  for (auto& [p, s] : out) s.epoch_s = median(epochs[p]);
  return out;
}

LinkFit fit_link_from_bench_text(const std::string& json_text, const std::string& algo, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const std::exception& e) {
    throw InputError(where + ": not JSON (want bench_allreduce --benchmark_format=json output)");
  }
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array()) {
    throw InputError(where + ": no \"benchmarks\" list (want bench_allreduce --benchmark_format=json output)");
  }
  // The hops of the rows' algorithm (contract/allreduce_algo.h): star's own, every other one's
  // (native, nccl) as a ring's, as the link model times them.
  const AllreduceAlgo pattern = algo == "star" ? AllreduceAlgo::star : AllreduceAlgo::ring;
  // Normal equations of the weighted least squares in (α, 1/β): rows x = (hops, link bytes), w = 1/t².
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  struct Row { double x1, x2, t; };
  std::vector<Row> rows;
  const std::string prefix = "allreduce/" + algo + "/";
  for (const auto& b : j["benchmarks"]) {
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) continue;
    if (b["name"].get<std::string>().rfind(prefix, 0) != 0) continue;
    if (b.contains("run_type") && b["run_type"] != "iteration") continue;  // aggregates of repetitions
    if (!b.contains("real_time") || !b.contains("bytes") || !b.contains("nranks")) {
      throw InputError(where + ": benchmark '" + b["name"].get<std::string>() + "' lacks real_time, bytes or nranks");
    }
    const std::string unit = b.value("time_unit", "ns");
    const double scale = unit == "s" ? 1 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : 1e-9;
    const double t = b["real_time"].get<double>() * scale;
    const double bytes = b["bytes"].get<double>(), k = b["nranks"].get<double>();
    if (!(t > 0) || !(k >= 2 && k <= (1 << 20))) continue;
    const HopPattern p = hop_pattern(pattern, bytes, static_cast<int>(k));
    rows.push_back({p.steps, p.link_bytes(), t});
  }
  if (rows.size() < 2) {
    throw InputError(where + ": fewer than 2 '" + algo + "' all-reduce rows with 2 or more ranks to fit α and β to");
  }
  for (const Row& r : rows) {
    const double w = 1 / (r.t * r.t);
    s11 += w * r.x1 * r.x1, s12 += w * r.x1 * r.x2, s22 += w * r.x2 * r.x2;
    r1 += w * r.x1 * r.t, r2 += w * r.x2 * r.t;
  }
  double alpha = 0, inv_beta = 0;
  const double det = s11 * s22 - s12 * s12;
  if (det > 0) {
    alpha = (r1 * s22 - r2 * s12) / det;
    inv_beta = (s11 * r2 - s12 * r1) / det;
  }
  if (!(det > 0) || alpha < 0) {  // a latency below zero: fit the bandwidth alone (α = 0)
    alpha = 0;
    inv_beta = r2 / s22;
  }
  if (!(inv_beta > 0)) {  // a bandwidth below zero: fit the latency alone
    inv_beta = 0;
    alpha = r1 / s11;
  }
  LinkFit fit;
  fit.algo = algo;
  fit.points = static_cast<int>(rows.size());
  fit.alpha_us = alpha * 1e6;
  fit.gbps = inv_beta > 0 ? 1 / inv_beta / 1e9 : kMaxGbps;
  double ss = 0;
  for (const Row& r : rows) {
    const double rel = (alpha * r.x1 + inv_beta * r.x2 - r.t) / r.t;
    ss += rel * rel;
  }
  fit.rms_rel_residual = std::sqrt(ss / static_cast<double>(rows.size()));
  fit.gbps = std::clamp(fit.gbps, kMinGbps, kMaxGbps);
  fit.alpha_us = std::min(fit.alpha_us, kMaxAlphaUs);
  return fit;
}

LinkFit fit_link_from_bench(const std::string& path, const std::string& algo) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("--link-from: cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return fit_link_from_bench_text(ss.str(), algo, path);
}

}  // namespace dpscale::predict
