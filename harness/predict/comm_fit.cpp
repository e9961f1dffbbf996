// comm_fit.cpp — α, β and the per-call overhead from measured naive comm times (comm_fit.h).
#include "comm_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "contract/option_values.h"
#include "core/errors.h"

namespace dpscale::predict {

std::vector<CommSample> parse_fit_comm(const std::string& text, const std::string& flag) {
  std::vector<CommSample> out;
  std::istringstream in(text);
  for (std::string piece; std::getline(in, piece, ',');) {
    const auto colon = piece.find(':'), eq = piece.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon) {
      throw OptionError(flag, "'" + piece + "' is not MODEL:K=SECONDS (e.g. small:2=0.0284)");
    }
    CommSample s;
    s.model = piece.substr(0, colon);
    try {
      s.world_size = static_cast<int>(parse_whole(piece.substr(colon + 1, eq - colon - 1), 2, 1 << 20));
      s.comm_epoch_s = parse_real(piece.substr(eq + 1), {0.0, false});
    } catch (const ValueError& e) {
      throw OptionError(flag, "'" + piece + "': " + e.what());
    }
    out.push_back(s);
  }
  if (out.empty()) throw OptionError(flag, "names no time (e.g. small:2=0.0284)");
  return out;
}

CommFit fit_comm(const std::vector<CommSample>& samples, const std::vector<SingleRun>& singles, const Workload& w,
                 AllreduceAlgo algo) {
  if (algo == AllreduceAlgo::hier) throw InputError("--fit-comm: fits one link (--algo ring, native or star), not hier's two");
  struct Row {
    std::array<double, 3> x;  // coefficients of α, o, 1/β
    double t;
  };
  std::vector<Row> rows;
  const double steps = static_cast<double>(w.samples / w.batch);
  for (const CommSample& s : samples) {
    const auto single = std::find_if(singles.begin(), singles.end(), [&](const SingleRun& r) { return r.spec.name == s.model; });
    if (single == singles.end()) {
      throw InputError("--fit-comm: model '" + s.model + "' has no single-device epoch (give it in --single or --from)");
    }
    const std::vector<Launch> ls = launches(single->spec, SyncSetup{}, 1.0);
    double bytes = 0;
    for (const Launch& l : ls) bytes += static_cast<double>(l.nbytes);
    // Every call pays the algorithm's hops (α each) and its overhead; the bytes go at β, as
    // contract/allreduce_algo.h counts them (linear in the bytes: the step's sum will do).
    const double calls = static_cast<double>(ls.size());
    const HopPattern p = hop_pattern(algo, bytes, s.world_size);
    rows.push_back({{steps * calls * p.steps, steps * calls, steps * p.link_bytes()}, s.comm_epoch_s});
  }
  // Weighted least squares (weight 1/t²) over a subset of the unknowns; false if singular.
  auto solve = [&](unsigned mask, std::array<double, 3>& theta) {
    std::vector<int> idx;
    for (int i = 0; i < 3; ++i) {
      if (mask & (1u << i)) idx.push_back(i);
    }
    const size_t n = idx.size();
    std::array<std::array<double, 4>, 3> a{};  // normal equations, augmented
    for (const Row& r : rows) {
      const double wt = 1 / (r.t * r.t);
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) a[i][j] += wt * r.x[idx[i]] * r.x[idx[j]];
        a[i][n] += wt * r.x[idx[i]] * r.t;
      }
    }
    for (size_t c = 0; c < n; ++c) {  // Gauss-Jordan with partial pivoting
      size_t p = c;
      for (size_t i = c + 1; i < n; ++i) {
        if (std::fabs(a[i][c]) > std::fabs(a[p][c])) p = i;
      }
      if (std::fabs(a[p][c]) < 1e-300) return false;
      std::swap(a[c], a[p]);
      for (size_t i = 0; i < n; ++i) {
        if (i == c) continue;
        const double f = a[i][c] / a[c][c];
        for (size_t j = c; j <= n; ++j) a[i][j] -= f * a[c][j];
      }
    }
    theta = {0, 0, 0};
    for (size_t i = 0; i < n; ++i) {
      theta[static_cast<size_t>(idx[i])] = a[i][n] / a[i][i];
      if (!(theta[static_cast<size_t>(idx[i])] >= 0)) return false;
    }
    return true;
  };
  // With samples at one K, α's and o's columns are proportional: fit o alone (α = 0).
  bool one_k = true;
  for (const CommSample& s : samples) one_k = one_k && s.world_size == samples.front().world_size;
  auto residual = [&](const std::array<double, 3>& theta) {
    double ss = 0;
    for (const Row& r : rows) {
      const double rel = (r.x[0] * theta[0] + r.x[1] * theta[1] + r.x[2] * theta[2] - r.t) / r.t;
      ss += rel * rel;
    }
    return std::sqrt(ss / static_cast<double>(rows.size()));
  };
  std::array<double, 3> best{};
  double best_res = INFINITY;
  bool have = false;
  for (unsigned mask = 1; mask < 8; ++mask) {
    if (one_k && (mask & 1u)) continue;
    std::array<double, 3> theta;
    if (!solve(mask, theta)) continue;
    const double res = residual(theta);
    if (res < best_res - 1e-12) best = theta, best_res = res, have = true;
  }
  if (!have) throw InputError("--fit-comm: the comm times fit no link with non-negative α, β and overhead");
  CommFit f;
  f.points = static_cast<int>(rows.size());
  f.alpha_us = best[0] * 1e6;
  f.call_overhead_s = best[1];
  f.gbps = best[2] > 0 ? std::clamp(1 / best[2] / 1e9, kMinGbps, kMaxGbps) : kMaxGbps;
  f.rms_rel_residual = best_res;
  return f;
}

}  // namespace dpscale::predict
