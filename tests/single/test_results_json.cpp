// test_results_json.cpp — what a successful train_single_gpu prints: exactly one RESULTS_JSON
// line with every field the issue lists and values consistent with each other; determinism;
// presets end to end; Fashion-MNIST learning; --save / --init through the executable.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <regex>

#include "models/param_layout.h"
#include "models/io/safetensors.h"
#include "single_run.h"
#include "contract/record.h"

namespace dpscale {
namespace {

using test::run_trainer;
using test::tiny_run;

// Runs and requires success: exit 0, exactly one stdout line, which is the record.
nlohmann::json run_ok(const std::vector<std::string>& args) {
  const ProcessResult r = run_trainer(args);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  const auto lines = test::lines_of(r.out);
  EXPECT_EQ(lines.size(), 1u) << "stdout:\n" << r.out;
  EXPECT_EQ(r.out.rfind(kResultPrefix, 0), 0u) << "stdout must be the RESULTS_JSON line:\n" << r.out;
  EXPECT_EQ(r.err.find("RESULTS_JSON"), std::string::npos) << "the record goes to stdout only";
  const auto j = find_results_json(r.out);
  if (!j) {
    ADD_FAILURE() << "no RESULTS_JSON object in:\n" << r.out;
    return nlohmann::json::object();
  }
  return *j;
}

TEST(SingleResultsJson, EveryFieldPresentAndConsistent) {
  // 2000 samples / batch 256 = 7 steps per epoch (the incomplete last batch is dropped).
  const nlohmann::json j = run_ok(tiny_run({{"--model", "784,32,10"}, {"--samples", "2000"}, {"--batch-size", "256"},
                                            {"--epochs", "3"}, {"--lr", "0.05"}, {"--seed", "7"}}));
  const char* fields[] = {"schema", "mode", "backend", "device_name", "model", "widths", "n_params",
                          "world_size", "global_batch", "n_samples", "epochs", "steps_per_epoch", "lr",
                          "epoch_times_s", "avg_epoch_s", "throughput_samples_per_s", "losses",
                          "test_accuracy", "version", "timestamp"};
  for (const char* f : fields) ASSERT_TRUE(j.contains(f)) << "missing field " << f;

  EXPECT_EQ(j["schema"], "dpscale.result/1");
  EXPECT_EQ(j["mode"], "single");
  EXPECT_EQ(j["backend"], "cpu");
  ASSERT_TRUE(j["device_name"].is_string());
  EXPECT_FALSE(j["device_name"].get<std::string>().empty());
  EXPECT_EQ(j["model"], "custom");
  EXPECT_EQ(j["widths"], (std::vector<int>{784, 32, 10}));
  EXPECT_EQ(j["n_params"], 784 * 32 + 32 + 32 * 10 + 10);
  EXPECT_EQ(j["world_size"], 1);
  EXPECT_EQ(j["global_batch"], 256);
  EXPECT_EQ(j["n_samples"], 2000);
  EXPECT_EQ(j["epochs"], 3);
  EXPECT_EQ(j["steps_per_epoch"], 2000 / 256);
  EXPECT_DOUBLE_EQ(j["lr"].get<double>(), 0.05);
  EXPECT_TRUE(j["test_accuracy"].is_null());  // synthetic data has no test split

  const auto times = j["epoch_times_s"].get<std::vector<double>>();
  ASSERT_EQ(times.size(), 3u);  // one per epoch
  for (double t : times) EXPECT_GT(t, 0.0);
  const double total = std::accumulate(times.begin(), times.end(), 0.0);
  EXPECT_NEAR(j["avg_epoch_s"].get<double>(), total / 3, 1e-9 * total);
  const double steps = 3.0 * (2000 / 256);
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), steps * 256 / total, 1e-6 * steps * 256 / total);
  const auto losses = j["losses"].get<std::vector<double>>();
  ASSERT_EQ(losses.size(), 3u);
  for (double l : losses) EXPECT_TRUE(std::isfinite(l) && l > 0);
  EXPECT_LT(losses[2], losses[0]);  // random labels, but 2000 samples are partly memorised

  ASSERT_TRUE(j["version"].is_string());
  EXPECT_FALSE(j["version"].get<std::string>().empty());
  ASSERT_TRUE(j["timestamp"].is_string());
  EXPECT_TRUE(std::regex_match(j["timestamp"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << j["timestamp"];

  // The shared reader accepts what the trainer wrote (writer and reader cannot drift).
  const RunRecord rec = record_from_json(j);
  EXPECT_EQ(rec.steps, 21);
  EXPECT_EQ(rec.losses, losses);
  EXPECT_EQ(rec.epoch_times_s, times);
  EXPECT_FALSE(rec.test_accuracy.has_value());
}

TEST(SingleResultsJson, SameSeedSameLossesOtherSeedDifferent) {
  auto args = [](const std::string& seed) {
    return tiny_run({{"--model", "784,16,10"}, {"--samples", "512"}, {"--batch-size", "64"}, {"--epochs", "2"},
                     {"--seed", seed}});
  };
  const auto a = run_ok(args("3"))["losses"], b = run_ok(args("3"))["losses"], c = run_ok(args("4"))["losses"];
  EXPECT_EQ(a, b);  // bit-identical: same data, same weights, same arithmetic
  EXPECT_NE(a, c);
}

class SingleSeedDrivesData : public test::TempDirTest {};

// --seed seeds the synthetic data as well as the weights: with the weights fixed by --init, a
// different --seed must still change the run (its data), and the same one must not.
TEST_F(SingleSeedDrivesData, SyntheticDataFollowsSeed) {
  const std::string ckpt = path("w.safetensors");
  run_ok(tiny_run({{"--save", ckpt}, {"--max-steps", "1"}}));
  auto losses = [&](const std::string& seed) {
    return run_ok(tiny_run({{"--init", ckpt}, {"--seed", seed}}))["losses"];
  };
  EXPECT_EQ(losses("5"), losses("5"));
  EXPECT_NE(losses("5"), losses("6"));
}

TEST(SingleResultsJson, PresetEndToEnd) {
  const nlohmann::json j = run_ok(tiny_run({{"--model", "small"}, {"--samples", "256"}, {"--batch-size", "128"},
                                            {"--max-steps", "1"}, {"--warmup-steps", "0"}}));
  EXPECT_EQ(j["model"], "small");
  EXPECT_EQ(j["widths"], (std::vector<int>{784, 1024, 512, 256, 10}));
  EXPECT_EQ(j["n_params"], 1462538);
  EXPECT_EQ(j["steps"], 1);  // --max-steps stops after one optimizer step
}

// A small model on real Fashion-MNIST for 400 steps: well above chance (10%) on the test split.
TEST(SingleLearning, FashionMnistTestAccuracyAbove70Percent) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed (scripts/install-deps.sh installs dataset-fashion-mnist)";
  }
  // 25,600 samples / 128 = 200 steps per epoch, 2 epochs = 400 steps.
  const nlohmann::json j = run_ok({"--backend", "cpu", "--quiet", "--model", "784,128,10", "--data", "fashion-mnist",
                                   "--data-dir", dir, "--samples", "25600", "--batch-size", "128", "--epochs", "2",
                                   "--lr", "0.05"});
  ASSERT_TRUE(j["test_accuracy"].is_number()) << j.dump();
  const double acc = j["test_accuracy"].get<double>();
  std::printf("[fashion-mnist] 784,128,10, 400 steps: losses %s, test accuracy %.4f\n", j["losses"].dump().c_str(), acc);
  EXPECT_GT(acc, 0.70);
  EXPECT_LE(acc, 1.0);
  EXPECT_EQ(j["steps"], 400);
  const auto losses = j["losses"].get<std::vector<double>>();
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_LT(losses[1], losses[0]);
  EXPECT_LT(losses[1], 0.8);  // chance is ln 10 = 2.30
}

class SingleSaveInit : public test::TempDirTest {};

TEST_F(SingleSaveInit, SavedWeightsLoadBackThroughInit) {
  const std::string ckpt = path("final.safetensors");
  run_ok(tiny_run({{"--save", ckpt}}));
  EXPECT_EQ(entries(), std::set<std::string>{"final.safetensors"});  // no temporary left
  const ParamLayout layout(MlpSpec{"custom", {784, 8, 10}});
  const std::vector<float> w = load_checkpoint(ckpt, layout);  // the model's own tensors, F32
  for (float v : w) ASSERT_TRUE(std::isfinite(v));

  // Start from it with an lr so small that no step moves any weight by one ulp: the second
  // --save must write back the very bytes --init read.
  const std::string again = path("again.safetensors");
  run_ok(tiny_run({{"--init", ckpt}, {"--save", again}, {"--lr", "1e-30"}}));
  const std::vector<float> w2 = load_checkpoint(again, layout);
  ASSERT_EQ(w.size(), w2.size());
  EXPECT_EQ(0, std::memcmp(w.data(), w2.data(), w.size() * sizeof(float)));
}

}  // namespace
}  // namespace dpscale
