// textbook.cpp — Code 15.9.1 and Code 15.2.1, line for line, printing as the book's Python does.
#include "textbook.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "contract/link_model.h"

namespace dpscale::predict {

namespace {

// printf into a std::string (the book's f-strings have fixed widths, so lines are short).
template <typename... A>
std::string fmt(const char* f, A... a) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

// A link of the α-β model (contract/link_model.h) with no dilation.
LinkModel link_of(double alpha_us, double gbps) { return LinkModel{"custom", alpha_us, gbps, 1.0}; }

size_t payload_bytes(double params, double bytes_per_param) {
  return static_cast<size_t>(std::llround(params * bytes_per_param));
}

// Python's f"{n:,}" for a whole number: a comma before every group of three digits from the right.
std::string with_commas(double v) {
  const std::string digits = fmt("%.0f", v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "300" or "12.5": the bandwidth as the book writes it in its labels.
std::string short_number(double v) { return fmt("%g", v); }

std::string precision_name(double bytes_per_param) {
  if (bytes_per_param == 1) return "fp8";
  if (bytes_per_param == 2) return "fp16";
  if (bytes_per_param == 4) return "fp32";
  if (bytes_per_param == 8) return "fp64";
  return short_number(bytes_per_param) + " B/param";
}

}  // namespace

std::vector<Row1591> simulate_1591(const Sim1591& in) {
  const double flops_per_ex = in.flops_per_example > 0 ? in.flops_per_example : 6 * in.params;
  const double gpu_flops = in.device_tflops * 1e12;
  const LinkModel net = link_of(0.0, in.net_gbps);  // the book's ring has no latency term
  const size_t payload = payload_bytes(in.params, in.bytes_per_param);
  auto step = [&](int k) {
    Row1591 r;
    r.k = k;
    const double b = in.global_batch / k;                 // per-GPU local batch
    r.compute_ms = (b * flops_per_ex / gpu_flops) * 1e3;  // local fwd+bwd
    r.comm_ms = net.ring_seconds(payload, k) * 1e3;       // 2(K-1)/K · payload / bandwidth
    r.load_ms = (b / in.loader_samples_per_s) * 1e3;      // deliver b examples
    // Overlap: comm and loading hide behind compute up to the compute budget.
    const double exposed_comm = std::max(0.0, r.comm_ms - r.compute_ms);
    const double exposed_load = std::max(0.0, r.load_ms - r.compute_ms);
    r.step_ms = r.compute_ms + std::max(exposed_comm, exposed_load);
    if (exposed_comm == 0.0 && exposed_load == 0.0) {
      r.dominant = "compute-bound (overlap wins)";
    } else if (exposed_comm >= exposed_load) {
      r.dominant = "communication-bound";
    } else {
      r.dominant = "data-loading-bound";
    }
    return r;
  };
  const double t1 = step(1).step_ms;  // the single-worker step, the baseline
  std::vector<Row1591> rows;
  for (int k : in.world_sizes) {
    Row1591 r = step(k);
    r.speedup = t1 / r.step_ms;
    r.eff_pct = 100.0 * r.speedup / k;
    rows.push_back(r);
  }
  return rows;
}

std::string render_1591(const Sim1591& in) {
  std::string out = fmt("%5s %9s %8s %8s %9s %8s %6s  dominant bottleneck\n", "K", "compute", "comm", "load", "step",
                        "speedup", "eff%");
  out += std::string(78, '-') + "\n";
  for (const Row1591& r : simulate_1591(in)) {
    out += fmt("%5d %8.1f %8.1f %8.1f %8.1f %7.1fx %5.0f  %s\n", r.k, r.compute_ms, r.comm_ms, r.load_ms, r.step_ms,
               r.speedup, r.eff_pct, r.dominant.c_str());
  }
  return out;
}

Result1521 simulate_1521(const Sim1521& in) {
  const size_t grad_bytes = payload_bytes(in.params, in.bytes_per_param);
  Result1521 r;
  r.intra_s = link_of(in.intra_alpha_us, in.intra_gbps).ring_seconds(grad_bytes, in.world_size);
  r.inter_s = link_of(in.inter_alpha_us, in.inter_gbps).ring_seconds(grad_bytes, in.world_size);
  const double compute_s = in.compute_ms * 1e-3;
  // Ideal step = compute only; real step = compute + exposed communication.
  r.eff_intra = compute_s / (compute_s + r.intra_s);
  r.eff_inter = compute_s / (compute_s + r.inter_s);
  return r;
}

std::string render_1521(const Sim1521& in) {
  const Result1521 r = simulate_1521(in);
  const double grad_bytes = in.params * in.bytes_per_param;
  std::string out;
  out += "model parameters        : " + with_commas(in.params) + "\n";
  out += fmt("gradient payload (%s) : %.2f GB\n", precision_name(in.bytes_per_param).c_str(), grad_bytes / 1e9);
  out += fmt("compute per step        : %.0f ms\n", in.compute_ms);
  out += "\n";
  out += fmt("intra-node all-reduce   : %7.2f ms   (NVSwitch ~%s GB/s)\n", r.intra_s * 1e3, short_number(in.intra_gbps).c_str());
  out += fmt("inter-node all-reduce   : %7.2f ms   (InfiniBand ~%s GB/s)\n", r.inter_s * 1e3,
             short_number(in.inter_gbps).c_str());
  out += fmt("inter/intra slowdown    : %7.1fx\n", r.inter_s / r.intra_s);
  out += "\n";
  out += fmt("scaling efficiency intra: %6.1f %%\n", r.eff_intra * 100);
  out += fmt("scaling efficiency inter: %6.1f %%\n", r.eff_inter * 100);
  out += fmt("efficiency lost crossing nodes: %5.1f percentage points\n", (r.eff_intra - r.eff_inter) * 100);
  return out;
}

}  // namespace dpscale::predict
