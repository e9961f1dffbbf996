// test_shared_gpu.cpp — records of --share-gpu runs (gpu_shared: ranks on one GPU, for
// correctness) through the real `dpscale`: report, compare (crude and gated) and predict refuse to
// draw speedups from a file that holds one, in one line naming the file and line, exit 2; the same
// file with the flag off is read as usual (control). And the field itself round-trips.
#include <gtest/gtest.h>

#include "harness_util.h"

namespace dpscale {
namespace {

using test::ScratchDir;

// single and naive K = 2 of one model, the naive run's record saying gpu_shared or not.
std::string results(bool shared) {
  RunRecord naive = test::make_record(test::pt("small", "naive", 2), 0.6, 0.1);
  naive.gpu_shared = shared;
  return test::sweep_line(test::pt("small", "single", 1), test::make_record(test::pt("small", "single", 1), 1.0)) +
         test::sweep_line(test::pt("small", "naive", 2), naive);
}

void expect_refused(const ProcessResult& r, const std::string& file, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const auto lines = test::lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find(file + ":2: a --share-gpu run (gpu_shared: 2 ranks"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(what + " draws no speedup"), std::string::npos) << lines[0];
}

TEST(HarnessSharedGpu, ReportComparePredictRefuseASharedGpuFile) {
  ScratchDir d;
  const std::string shared = d.file("shared.jsonl"), plain = d.file("plain.jsonl");
  test::write_file(shared, results(true));
  test::write_file(plain, results(false));

  expect_refused(test::dpscale({"report", shared}), shared, "dpscale report");
  EXPECT_EQ(test::dpscale({"report", plain}).exit_code, 0) << "control: the same file without the flag reports";

  expect_refused(test::dpscale({"compare", shared, plain, "--tolerance", "0.5"}), shared, "dpscale compare");
  EXPECT_EQ(test::dpscale({"compare", plain, plain, "--tolerance", "0.5"}).exit_code, 0);
  expect_refused(test::dpscale({"compare", plain, shared}), shared, "dpscale compare");

  const ProcessResult p = test::dpscale({"predict", "--from", shared, "--link", "eth10"});
  expect_refused(p, shared, "dpscale predict");
  const ProcessResult control = test::dpscale({"predict", "--from", plain, "--link", "eth10"});
  EXPECT_EQ(control.exit_code, 0) << control.err;
}

TEST(HarnessSharedGpu, FieldsRoundTripAndOlderRecordsReadAsUnshared) {
  RunRecord r = test::make_record(test::pt("small", "naive", 4), 0.5, 0.1);
  r.gpu_shared = true;
  r.finite_check = "optimizer";
  r.finite_check_every = 10;
  const nlohmann::json j = nlohmann::json::parse(to_json(r).dump());
  EXPECT_EQ(j["gpu_shared"], true);
  const RunRecord back = record_from_json(j);
  EXPECT_TRUE(back.gpu_shared);
  EXPECT_EQ(back.finite_check, "optimizer");
  EXPECT_EQ(back.finite_check_every, 10);
  nlohmann::json older = j;
  older.erase("gpu_shared");
  older.erase("finite_check");
  older.erase("finite_check_every");
  const RunRecord old = record_from_json(older);
  EXPECT_FALSE(old.gpu_shared);
  EXPECT_EQ(old.finite_check, "");
  EXPECT_FALSE(old.finite_check_every.has_value());
  nlohmann::json mistyped = j;
  mistyped["gpu_shared"] = "yes";
  EXPECT_THROW(record_from_json(mistyped), std::runtime_error);
}

}  // namespace
}  // namespace dpscale
