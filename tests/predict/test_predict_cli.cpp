// test_predict_cli.cpp — `dpscale predict` as a user runs it: calibration from a results file and
// from the command line agree, the JSON rows carry the promised fields, --validate reads a real
// sweep (docs/figures/cpu-run.jsonl, 18 runs on this machine) point by point, --recommend-cap
// names the minimum, and bad input is one line with exit status 2.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "harness/predict/validate.h"
#include "tests/harness/harness_util.h"

namespace dpscale::test {
namespace {

const std::string kCpuRun = kSource + "/docs/figures/cpu-run.jsonl";
// The transformer's sweep on this kind of VM: gpt-tiny and the mid-size decoder, single and the
// three modes at K = 2 on 50:300, bucketed at 1, 4 and 25 MiB (experiments/transformer).
const std::string kGptRun = kSource + "/experiments/transformer/data/gpt-cpu.jsonl";

nlohmann::json json_of(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(PredictCli, JsonRowsCarryThePromisedFields) {
  const nlohmann::json rows = json_of(dpscale({"predict", "--single", "small=0.0361,medium=0.118", "--link", "pcie4",
                                               "--format", "json"}));
  ASSERT_TRUE(rows.is_array());
  EXPECT_EQ(rows.size(), 2u * 3 * 9);  // models × modes × K = 1..256
  for (const auto& r : rows) {
    for (const char* key : {"model", "mode", "world_size", "bucket_cap_mb", "epoch_s", "comm_s", "speedup", "efficiency",
                            "gamma", "amdahl_max", "knee"}) {
      EXPECT_TRUE(r.contains(key)) << key;
    }
    EXPECT_EQ(r["bucket_cap_mb"].is_null(), r["mode"] != "bucketed");
  }
  // 32768 samples, batch 1024 by default: K = 1 is the single epoch given.
  EXPECT_DOUBLE_EQ(rows[0]["epoch_s"].get<double>(), 0.0361);
  EXPECT_EQ(rows[0]["world_size"], 1);
}

TEST(PredictCli, FromAResultsFileEqualsTheSameNumbersOnTheCommandLine) {
  // cpu-run.jsonl: one single run per model at 8192 samples, batch 1024, link 50:300.
  const nlohmann::json from = json_of(dpscale({"predict", "--from", kCpuRun, "--link", "50:300", "--link-dilation",
                                               "155", "--world-sizes", "2,8", "--format", "json"}));
  const nlohmann::json single =
      json_of(dpscale({"predict", "--single", "small=0.481799731,medium=3.2331490445,large=13.61450542", "--samples",
                       "8192", "--link", "50:300", "--link-dilation", "155", "--world-sizes", "2,8", "--format", "json"}));
  ASSERT_EQ(from.size(), single.size());
  for (size_t i = 0; i < from.size(); ++i) EXPECT_NEAR(from[i]["epoch_s"], single[i]["epoch_s"], 1e-9) << i;
  // Without --link the file's own link and median dilation are taken: a different answer from
  // dilation 1 (negative control).
  const nlohmann::json own = json_of(dpscale({"predict", "--from", kCpuRun, "--world-sizes", "2", "--format", "json"}));
  EXPECT_GT(own[0]["link_dilation"].get<double>(), 100);
  EXPECT_EQ(own[0]["link_alpha_us"], 50.0);
}

TEST(PredictCli, ValidateReadsEveryDataParallelPointOfARealSweep) {
  const predict::Validation v = predict::validate(kCpuRun);
  ASSERT_EQ(v.rows.size(), 15u);  // 3 models × (naive, interleaved, bucketed at 3 caps)
  for (const predict::ValidationRow& r : v.rows) {
    // The model launches exactly the all-reduces the trainer did.
    EXPECT_EQ(r.predicted_calls, r.measured_calls) << r.point.describe();
    EXPECT_TRUE(std::isfinite(r.error));
  }
  // The model explains this sweep (median and worst as documented in docs/predict/README.md);
  // a model that ignored the dilation or the overlap would be off by far more.
  EXPECT_LT(v.median_abs_error, 0.25);
  const ProcessResult r = dpscale({"predict", "--validate", kCpuRun});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("median |error|"), std::string::npos);
}

// A transformer's sweep is predicted from its own tensors and buckets: every point launches the
// all-reduces its trainer did (28 and 52 per-tensor calls, 22, 6 and 2 buckets), and the step
// model explains the undisturbed points. An MLP-shaped step (a record without widths: no
// tensors) would launch no all-reduce at all.
TEST(PredictCli, ValidateReadsATransformerSweep) {
  const predict::Validation v = predict::validate(kGptRun);
  ASSERT_EQ(v.rows.size(), 10u);  // 2 models × (naive, interleaved, bucketed at 3 caps)
  for (const predict::ValidationRow& r : v.rows) {
    EXPECT_EQ(r.predicted_calls, r.measured_calls) << r.point.describe();
    EXPECT_GT(r.predicted_comm_s, 0) << r.point.describe();
  }
  EXPECT_EQ(v.rows[0].measured_calls, 28);  // gpt-tiny naive: 12·L + 4 tensors
  EXPECT_LT(v.median_abs_error, 0.10);
  // --from the same file: the transformer's naive comm at K = 2 from its 28 tensors, at the
  // file's median dilation (F 94) where the run had its own (81): within 20% of the measured.
  const nlohmann::json rows = json_of(dpscale({"predict", "--from", kGptRun, "--world-sizes", "2", "--modes", "naive",
                                               "--models", "gpt-tiny", "--format", "json"}));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["model"], "gpt-tiny");
  EXPECT_NEAR(rows[0]["comm_s"].get<double>(), v.rows[0].measured_comm_s, 0.2 * v.rows[0].measured_comm_s);
  // Per token: half the tokens per sample, well under the measured epoch's compute.
  const nlohmann::json half = json_of(dpscale({"predict", "--from", kGptRun, "--world-sizes", "1", "--modes", "naive",
                                               "--models", "gpt-tiny", "--seq-len", "32", "--format", "json"}));
  const nlohmann::json full = json_of(dpscale({"predict", "--from", kGptRun, "--world-sizes", "1", "--modes", "naive",
                                               "--models", "gpt-tiny", "--format", "json"}));
  EXPECT_LT(half[0]["epoch_s"].get<double>(), 0.55 * full[0]["epoch_s"].get<double>());
  EXPECT_GT(half[0]["epoch_s"].get<double>(), 0.45 * full[0]["epoch_s"].get<double>());
  // --seq-len past the context, or with no transformer to apply to: one line, exit 2.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"predict", "--from", kGptRun, "--seq-len", "65"},
        std::vector<std::string>{"predict", "--from", kCpuRun, "--seq-len", "32"}}) {
    const ProcessResult r = dpscale(bad);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--seq-len"), std::string::npos) << r.err;
  }
}

TEST(PredictCli, RecommendCapNamesTheMinimum) {
  const nlohmann::json rows = json_of(dpscale({"predict", "--recommend-cap", "--single", "large=8", "--samples", "4096",
                                               "--link", "pcie4", "--link-dilation", "150", "--format", "json"}));
  ASSERT_EQ(rows.size(), 10u);  // 0.25 .. 128 MiB at K = 2
  double best = 1e30, flagged = -1;
  for (const auto& r : rows) {
    best = std::min(best, r["exposed_comm_s"].get<double>());
    if (r["best"].get<bool>()) flagged = r["exposed_comm_s"];
    EXPECT_EQ(r["world_size"], 2);
  }
  EXPECT_EQ(flagged, best);
  // Caps change the answer here (the link is as slow as the compute), else the test proves little.
  double worst = 0;
  for (const auto& r : rows) worst = std::max(worst, r["exposed_comm_s"].get<double>());
  EXPECT_GT(worst, best * 1.1);
}

TEST(PredictCli, BadInputIsOneLineAndExitTwo) {
  for (const std::vector<std::string>& args : {
           std::vector<std::string>{"predict"},                                          // no calibration
           {"predict", "--single", "small=0.1"},                                          // no link
           {"predict", "--single", "small", "--link", "pcie4"},                          // not MODEL=SECONDS
           {"predict", "--single", "tiny=1", "--link", "pcie4"},                         // unknown model
           {"predict", "--single", "small=-1", "--link", "pcie4"},                       // negative time
           {"predict", "--single", "small=1", "--link", "pcie4", "--world-sizes", "2048"},  // K > batch
           {"predict", "--single", "small=1", "--link", "fast"},                         // bad link
           {"predict", "--single", "small=1", "--link", "pcie4", "--modes", "ddp"},      // bad mode
           {"predict", "--single", "small=1", "--link", "pcie4", "--algo", "tree"},      // bad algorithm
           {"predict", "--single", "small=1", "--link", "pcie4", "--format", "xml"},     // bad format
           {"predict", "--single", "small=1", "--link-from", "/nonexistent.json"},       // unreadable bench file
           {"predict", "--validate", "/nonexistent.jsonl"},                              // unreadable results
       }) {
    const ProcessResult r = dpscale(args);
    std::string cmd;
    for (const std::string& a : args) cmd += a + " ";
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.out << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << cmd << ": " << r.err;
  }
}

// Each refusal names the option it is about, in one line: an empty --world-sizes is no default,
// --fit-step's own values are --fit-step's (not --fit-comm's), and a --fit-step epoch that is
// not longer than its comm time, or whose compute shrank faster than 1/K, fits no fixed step
// (the fit used to clamp it to 0 without a word). Each with its control.
TEST(PredictCli, EachRefusalNamesItsOwnOption) {
  const std::vector<std::string> base = {"predict", "--single", "small=0.1", "--fit-comm", "small:2=0.03"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"predict", "--single", "small=0.03", "--link", "pcie4", "--world-sizes", ""}, "--world-sizes: must be a comma-separated list"},
           {{"predict", "--single", "small=0.03", "--link", "pcie4", "--world-sizes", "2,"}, "--world-sizes: must be a comma-separated list"},
           {with(base, {"--fit-step", "x"}), "--fit-step: 'x' is not MODEL:K=SECONDS"},
           {with(base, {"--fit-step", "small:1=0.1"}), "--fit-step: 'small:1=0.1': must be at least 2"},
           {with(base, {"--fit-step", "small:2=0.02"}),
            "--fit-step: small:2's epoch 0.02 s is not longer than its comm time 0.03 s in --fit-comm"},
           {with(base, {"--fit-step", "small:2=0.04"}),
            "--fit-step: small:2: its compute per step (epoch less comm) 0.3125 ms is below the single run's per-step "
            "compute / K 1.562 ms: no fixed step fits it"}}) {
    std::string cmd;
    for (const std::string& a : args) cmd += "'" + a + "' ";
    SCOPED_TRACE(cmd);
    const ProcessResult r = dpscale(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // Controls: an epoch whose compute is above T1/K fits, and world sizes given are taken.
  EXPECT_EQ(dpscale(with(base, {"--fit-step", "small:2=0.1", "--world-sizes", "2"})).exit_code, 0);
  EXPECT_EQ(dpscale({"predict", "--single", "small=0.03", "--link", "pcie4", "--world-sizes", "2,4"}).exit_code, 0);
}

}  // namespace
}  // namespace dpscale::test
