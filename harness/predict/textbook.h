// textbook.h — the two simulators of the textbook, reproduced exactly: Code 15.9.1 (the
// scaling-efficiency simulator: compute, overlapped ring all-reduce, data loading; Output
// 15.9.1) and Code 15.2.1 (ring all-reduce intra- vs inter-node and the efficiency lost crossing
// the node boundary; Output 15.2.1). Each takes its inputs as a struct whose defaults are the
// book's, and renders the book's text: same columns, labels, widths and rounding (printf's %.Nf
// and Python's f-strings both round the binary value correctly, so the digits agree).
//
//   dpscale predict --textbook 15.9.1 [--params 1e9 --bytes-per-param 2 --global-batch 8192 ...]
//   dpscale predict --textbook 15.2.1 [--params 1e9 --world-size 8 --compute-ms 250 ...]
//
// The ring all-reduce of both is contract/link_model.h's α-β ring, 2(K-1)·(α + B/K / β): Code
// 15.9.1 has no latency term (α = 0), Code 15.2.1 a per-hop latency.
#pragma once

#include <string>
#include <vector>

namespace dpscale::predict {

// Code 15.9.1's inputs (the book's names in comments).
struct Sim1591 {
  double params = 1.0e9;              // P
  double bytes_per_param = 2;         // bytes_per_param (bf16)
  double global_batch = 8192;         // B_global (strong scaling)
  double flops_per_example = 0;       // flops_per_ex; 0 means 6 × P
  double device_tflops = 60;          // gpu_flops / 1e12
  double net_gbps = 25;               // net_GBps
  double loader_samples_per_s = 12000;  // loader_ex_per_s, per worker
  std::vector<int> world_sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256};
};

// One row of Output 15.9.1 (milliseconds).
struct Row1591 {
  int k = 1;
  double compute_ms = 0, comm_ms = 0, load_ms = 0, step_ms = 0, speedup = 0, eff_pct = 0;
  std::string dominant;
};

std::vector<Row1591> simulate_1591(const Sim1591& in);
std::string render_1591(const Sim1591& in);

// Code 15.2.1's inputs.
struct Sim1521 {
  double params = 1.0e9;          // P
  double bytes_per_param = 2;     // fp16
  int world_size = 8;             // K
  double compute_ms = 250;        // compute_s · 1e3
  double intra_alpha_us = 1.0, intra_gbps = 300.0;  // NVSwitch
  double inter_alpha_us = 5.0, inter_gbps = 12.5;   // InfiniBand 100 Gb/s
};

struct Result1521 {
  double intra_s = 0, inter_s = 0;     // all-reduce times
  double eff_intra = 0, eff_inter = 0; // compute / (compute + comm)
};

Result1521 simulate_1521(const Sim1521& in);
std::string render_1521(const Sim1521& in);

}  // namespace dpscale::predict
