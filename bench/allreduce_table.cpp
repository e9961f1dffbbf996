// allreduce_table.cpp — formatting of the nccl-tests-like table.
#include "allreduce_table.h"

#include <set>

#include "bench_args.h"
#include "contract/allreduce_algo.h"
#include "core/median.h"

namespace dpscale::bench {

void AllreduceTable::add(const std::string& algo, const AllreduceMeasurement& m) {
  runs_[{algo, m.nbytes}].push_back(m);
}

AllreduceMeasurement AllreduceTable::combined(const std::string& algo, size_t nbytes) const {
  const auto& runs = runs_.at({algo, nbytes});
  AllreduceMeasurement m = runs.front();
  std::vector<double> t;
  for (const auto& r : runs) {
    t.push_back(r.seconds);
    m.wrong = std::max(m.wrong, r.wrong);
  }
  m.seconds = median(t);
  return m;
}

double AllreduceTable::avg_busbw(const std::string& algo) const {
  double sum = 0.0;
  int n = 0;
  for (const auto& [key, runs] : runs_) {
    if (key.first != algo) continue;
    const AllreduceMeasurement m = combined(key.first, key.second);
    sum += allreduce_bandwidth(m.nbytes, m.seconds, k_).busbw_gbps;
    ++n;
  }
  return n ? sum / n : 0.0;
}

std::vector<std::string> AllreduceTable::collapse_warnings() const {
  std::vector<std::string> lines;
  for (const std::string& a : algos_) {
    double best = 0.0;
    size_t best_at = 0;
    for (const auto& [key, runs] : runs_) {  // sizes in ascending order (std::map)
      if (key.first != a) continue;
      const AllreduceMeasurement m = combined(key.first, key.second);
      const double busbw = allreduce_bandwidth(m.nbytes, m.seconds, k_).busbw_gbps;
      if (best > 0.0 && busbw < 0.5 * best) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "# WARNING: %s busbw %.3f GB/s at %zu B is below half of its best at a smaller size "
                      "(%.3f GB/s at %zu B)",
                      a.c_str(), busbw, key.second, best, best_at);
        lines.push_back(line);
      }
      if (busbw > best) best = busbw, best_at = key.second;
    }
  }
  return lines;
}

long long AllreduceTable::total_wrong() const {
  long long w = 0;
  for (const auto& [key, runs] : runs_) {
    for (const auto& r : runs) w += r.wrong > 0 ? r.wrong : 0;
  }
  return w;
}

void AllreduceTable::print(std::FILE* out, const std::vector<std::string>& banner) const {
  for (const std::string& line : banner) std::fprintf(out, "%s\n", line.c_str());
  std::vector<std::string> algos;  // the requested ones that have at least one row
  std::set<size_t> sizes;
  for (const std::string& a : algos_) {
    bool any = false;
    for (const auto& [key, runs] : runs_) {
      if (key.first == a) any = true, sizes.insert(key.second);
    }
    if (any) algos.push_back(a);
  }
  // Row prefix: 39 characters; each algorithm's group: 2 + 48 (time algbw busbw r0-sent #wrong).
  std::fprintf(out, "#\n# %37s", "");
  for (const std::string& a : algos) {
    std::string title = "---- ";
    title += a;
    title += ' ';
    title.append(title.size() < 48 ? 48 - title.size() : 0, '-');
    std::fprintf(out, "  %s", title.c_str());
  }
  std::fprintf(out, "\n# %12s %12s %6s %4s", "size", "count", "type", "op");
  for (size_t i = 0; i < algos.size(); ++i) std::fprintf(out, "  %10s %7s %7s %12s %8s", "time", "algbw", "busbw", "r0 sent", "#wrong");
  std::fprintf(out, "\n# %12s %12s %6s %4s", "(B)", "(elements)", "", "");
  for (size_t i = 0; i < algos.size(); ++i) std::fprintf(out, "  %10s %7s %7s %12s %8s", "(us)", "(GB/s)", "(GB/s)", "(B)", "");
  std::fprintf(out, "\n");
  for (size_t nbytes : sizes) {
    size_t count = nbytes / 4;
    std::fprintf(out, "  %12zu %12zu %6s %4s", nbytes, count, "float", "sum");
    for (const std::string& a : algos) {
      if (!runs_.count({a, nbytes})) {
        std::fprintf(out, "  %10s %7s %7s %12s %8s", "-", "-", "-", "-", "-");
        continue;
      }
      const AllreduceMeasurement m = combined(a, nbytes);
      const AllreduceBandwidth bw = allreduce_bandwidth(m.nbytes, m.seconds, k_);
      const std::string wrong = m.wrong < 0 ? "N/A" : std::to_string(m.wrong);
      std::fprintf(out, "  %10.2f %7.2f %7.2f %12.0f %8s", m.seconds * 1e6, bw.algbw_gbps, bw.busbw_gbps,
                   m.rank0_sent, wrong.c_str());
    }
    std::fprintf(out, "\n");
  }
  for (const std::string& w : collapse_warnings()) std::fprintf(out, "%s\n", w.c_str());
  bool checked = false;
  for (const auto& [key, runs] : runs_) {
    for (const auto& r : runs) checked = checked || r.wrong >= 0;
  }
  if (checked) {
    const long long w = total_wrong();
    std::fprintf(out, "# Out of bounds values : %lld %s\n", w, w == 0 ? "OK" : "FAILED");
  }
  std::fprintf(out, "# Avg bus bandwidth    :");
  for (const std::string& a : algos) std::fprintf(out, " %s %.4f ", a.c_str(), avg_busbw(a));
  std::fprintf(out, " (GB/s, mean over %zu sizes)\n#\n", sizes.size());
  std::fflush(out);
}

}  // namespace dpscale::bench
