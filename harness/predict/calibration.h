// calibration.h — where the step model's numbers come from.
//
//   compute  --from RESULTS.jsonl   every model's single-device runs in a sweep's file: the median
//                                   of their avg_epoch_s, at the samples, batch and (a
//                                   transformer's) tokens per sample they ran with
//            --single small=0.0361,medium=0.118   epoch seconds per preset at --samples/--batch-size
//   link     --link PRESET | ALPHA_US:GBPS (contract/link_model.h), or
//            --link-from FILE       least-squares α and β from `bench_allreduce
//                                   --benchmark_format=json` output (below)
//   dilation --link-dilation F | auto:TFLOPS, as the trainers (auto: F = TFLOPS / this machine's
//                                   GEMM rate on the model's largest layer, models/gemm/gemm_probe.h)
//
// The link fit: each benchmark row of the chosen algorithm gives (bytes B, ranks K, seconds t).
// The ring's time is t = 2(K-1)·α + 2(K-1)/K·B·(1/β) (the star's 2(K-1)·α + 2(K-1)·B·(1/β)), linear
// in α and 1/β; they are fitted by least squares on the relative residual (t_model - t)/t, so a
// 8-byte row and a 256 MB row weigh the same (absolute residuals would let the largest sizes
// decide alone).
#pragma once

#include <string>
#include <functional>
#include <map>
#include <vector>

#include "harness/point/point.h"
#include "harness/results/results_file.h"
#include "step_model.h"

namespace dpscale::predict {

// The model a record ran: its MLP widths, or its transformer at the record's seq_len.
ModelSpec model_of_record(const RunRecord& r);
// The name singles are grouped by: the model's key, and a transformer's seq_len beside it (two
// sequence lengths are two computes).
std::string single_key(const ModelSpec& spec);

// "small=0.0361,gpt-tiny=0.5": a preset of either kind (a transformer at its context, or at
// `w.seq_len` when set) with its epoch seconds at `w`; InputError naming the bad piece.
std::vector<SingleRun> parse_single_arg(const std::string& text, const Workload& w);

// The single-device runs of every model in a results file (in order of first appearance).
// InputError when the file has none.
std::vector<SingleRun> singles_from_results(const std::string& path);

// The single-device runs of a file by their point, each the median epoch of the point's
// successful runs that `take` keeps (all where it is empty): what a data-parallel run pairs with,
// its point beside(single, 1), as the gate pairs (two single runs that differ in accumulation or
// TF32 are two points, and neither stands in for the other).
std::map<Point, SingleRun> singles_by_point(const ResultsFile& f,
                                            const std::function<bool(const SweepEntry&)>& take = {});

struct LinkFit {
  double alpha_us = 0, gbps = 0;
  int points = 0;
  double rms_rel_residual = 0;  // sqrt(mean(((t_model - t)/t)^2))
  std::string algo;
};

// Fits the rows of `algo` (native | ring | star | nccl) in a bench_allreduce JSON file.
LinkFit fit_link_from_bench(const std::string& path, const std::string& algo);
LinkFit fit_link_from_bench_text(const std::string& json_text, const std::string& algo, const std::string& where);

}  // namespace dpscale::predict
