// test_reliability.cpp — reliability's single-rank cases, through the real train_single_gpu:
// non-finite data, --init weights and training values stop the run with exit 2 and one line
// naming the file or tensor; sizes that would overflow or exceed memory are refused before
// anything is allocated, saying how much was asked for; empty --save/--init paths are refused.
// Each class has a positive control (the same run without the one defect trains).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "models/data/rng.h"
#include "models/io/npy.h"
#include "models/io/safetensors.h"
#include "models/param_layout.h"
#include "single_run.h"

namespace dpscale {
namespace {

using test::expect_bad_input;
using test::run_trainer;
using test::tiny_run;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

void expect_ok(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_NE(r.out.find("RESULTS_JSON: "), std::string::npos);
}

class SingleNonFinite : public test::TempDirTest {
 protected:
  // 64 rows of N(0,1)·scale features for the tiny model (784 -> 8 -> 10), labels 0..9.
  void write_data(float scale, bool nan_every_997 = false) {
    std::vector<float> x(64 * 784);
    const CounterRng r(1, 1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = scale * r.normal(i);
    if (nan_every_997) {
      for (size_t i = 996; i < x.size(); i += 997) x[i] = kNan;
    }
    std::vector<int64_t> y(64);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i % 10);
    write_npy(path("x.npy"), "<f4", {64, 784}, x.data(), x.size() * 4);
    write_npy(path("y.npy"), "<i8", {64}, y.data(), y.size() * 8);
  }
  std::vector<std::string> npy_run(std::map<std::string, std::string> set = {}) {
    set.insert({{"--data", "npy"}, {"--features", path("x.npy")}, {"--labels", path("y.npy")}, {"--samples", "-"}});
    return tiny_run(set);
  }
};

TEST_F(SingleNonFinite, NanInNpyFeaturesIsRefusedAtLoad) {
  write_data(1.0f);
  expect_ok(run_trainer(npy_run()));  // control
  write_data(1.0f, /*nan_every_997=*/true);
  expect_bad_input(run_trainer(npy_run({{"--save", path("w.safetensors")}})),
                   {"x.npy", "non-finite feature (nan) at row 1, column 212"});
  EXPECT_FALSE(std::filesystem::exists(path("w.safetensors"))) << "a failed run must not save";
}

TEST_F(SingleNonFinite, NanInitWeightIsRefusedNamingTheTensor) {
  const MlpSpec spec{"custom", {784, 8, 10}};
  const ParamLayout layout(spec);
  std::vector<float> w(static_cast<size_t>(layout.param_buffer_count()));  // the padding is not written
  const CounterRng r(2, 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * r.normal(i);
  save_checkpoint(path("w.safetensors"), spec, layout, w);
  expect_ok(run_trainer(tiny_run({{"--init", path("w.safetensors")}})));  // control
  // layers.1.weight [10, 8] follows layers.0.weight and layers.0.bias in the file (forward
  // order); element 13 is [1, 5].
  std::fstream f(path("w.safetensors"), std::ios::in | std::ios::out | std::ios::binary);
  uint64_t header = 0;
  f.read(reinterpret_cast<char*>(&header), 8);
  f.seekp(static_cast<std::streamoff>(8 + header + (784 * 8 + 8 + 13) * 4));
  f.write(reinterpret_cast<const char*>(&kNan), 4);
  f.close();
  expect_bad_input(run_trainer(tiny_run({{"--init", path("w.safetensors")}})),
                   {"--init", "w.safetensors", "non-finite weight: layers.1.weight[1, 5] is nan"});
}

// Finite data (features ×1000) and a rate so large that lr·g overflows in the first update:
// the loss of step 1 was computed before the update and is finite, so only the weight check
// sees it — at step 1, naming a tensor. Without the check (--finite-check-every 0) the loss
// check fires a step later instead (negative control); at a sane rate the run trains (control).
TEST_F(SingleNonFinite, OverflowingUpdateStopsAtTheFirstStepNamingATensor) {
  write_data(1000.0f);
  expect_ok(run_trainer(npy_run()));
  const ProcessResult r = run_trainer(npy_run({{"--lr", "1e37"}, {"--save", path("w.safetensors")}}));
  expect_bad_input(r, {"non-finite values at epoch 1, step 1: parameter layers.", "inf"}, /*banner_allowed=*/true);
  EXPECT_FALSE(std::filesystem::exists(path("w.safetensors")));
  const ProcessResult unchecked = run_trainer(npy_run({{"--lr", "1e37"}, {"--finite-check-every", "0"}}));
  expect_bad_input(unchecked, {"non-finite loss at epoch 1, step 2"}, /*banner_allowed=*/true);
}

TEST(SingleNonFiniteOptions, CheckIntervalIsAWholeNumberInRange) {
  expect_bad_input(run_trainer(tiny_run({{"--finite-check-every", "-1"}})), {"--finite-check-every must not be negative"});
  expect_bad_input(run_trainer(tiny_run({{"--finite-check-every", "nan"}})), {"--finite-check-every must be a whole number"});
  expect_ok(run_trainer(tiny_run({{"--finite-check-every", "3"}})));
}

// ---------------------------------------------------------------- sizes that overflow
using SingleHugeSizes = test::TempDirTest;

TEST_F(SingleHugeSizes, NpyHeaderDeclaring2To62Rows) {
  const std::vector<float> some(16, 0.5f);
  const std::vector<int64_t> y(1, 0);
  write_npy(path("y.npy"), "<i8", {1}, y.data(), 8);
  auto run = [&] {
    return run_trainer(tiny_run({{"--data", "npy"}, {"--features", path("x.npy")}, {"--labels", path("y.npy")},
                                 {"--samples", "-"}}));
  };
  // 2^62 rows x 784 float32: the byte size overflows 64 bits (it once wrapped to a small number
  // and crashed in vector::resize with exit 1).
  write_npy(path("x.npy"), "<f4", {int64_t{1} << 62, 784}, some.data(), some.size() * 4);
  expect_bad_input(run(), {"x.npy", "shape (4611686018427387904, 784)", "overflows 64 bits"});
  // 2^40 rows: representable, so the file is simply far too short; the size asked for is named.
  write_npy(path("x.npy"), "<f4", {int64_t{1} << 40, 784}, some.data(), some.size() * 4);
  expect_bad_input(run(), {"x.npy", "truncated: expected 3448068464705536 data bytes, found 64"});
}

TEST_F(SingleHugeSizes, NpyDimensionBeyond2To63) {
  // A hand-written header: write_npy cannot even express the dimension.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 784), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header + std::string(64, '\0');
  std::ofstream(path("x.npy"), std::ios::binary) << file;
  const std::vector<int64_t> y(1, 0);
  write_npy(path("y.npy"), "<i8", {1}, y.data(), 8);
  expect_bad_input(run_trainer(tiny_run({{"--data", "npy"}, {"--features", path("x.npy")}, {"--labels", path("y.npy")},
                                         {"--samples", "-"}})),
                   {"x.npy", "beyond 2^63"});
}

TEST_F(SingleHugeSizes, IdxHeaderWhoseSizeOverflows) {
  // 0xFFFFFFFF^3 images x rows x cols: 2^96 bytes declared by a 16-byte header.
  auto gz = [&](const std::string& name, const std::string& bytes) {
    gzFile f = gzopen(path(name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  };
  gz("train-images-idx3-ubyte.gz", std::string("\x00\x00\x08\x03", 4) + std::string(12, '\xff') + "pixels");
  gz("train-labels-idx1-ubyte.gz", std::string("\x00\x00\x08\x01\x00\x00\x00\x01\x00", 9));
  expect_bad_input(run_trainer(tiny_run({{"--data", "fashion-mnist"}, {"--data-dir", dir_.string()}, {"--samples", "-"}})),
                   {"train-images-idx3-ubyte.gz", "overflows 64 bits"});
}

TEST(SingleHugeModel, WidthsBeyondMemoryAreRefusedWithTheAmount) {
  // The probe: std::bad_alloc, exit 1. 17 232 232 458 parameters: 128.4 GiB of weights
  // and gradients at least, refused before any allocation.
  expect_bad_input(run_trainer(tiny_run({{"--model", "784,65536,65536,65536,65536,65536,10"}})),
                   {"--model 784,65536,65536,65536,65536,65536,10", "17232232458 parameters", "needs 1", "GiB",
                    "more than this machine's"});
  // A batch whose activations alone exceed memory: 2^31 - 1 rows x (8 + 10) floats + dX buffers.
  expect_bad_input(run_trainer(tiny_run({{"--batch-size", "2147483647"}})), {"needs", "GiB", "more than this machine's"});
}

TEST(SingleEmptyPaths, SaveAndInitRefuseAnEmptyPath) {
  // The probe: --save '' and --init '' were silently ignored (an empty path read as
  // "no checkpoint"). tiny_run() takes "" as a bare flag, so the empty value is appended here.
  for (const std::string flag : {"--save", "--init", "--features", "--data-dir"}) {
    SCOPED_TRACE(flag);
    std::vector<std::string> args = tiny_run();
    args.insert(args.end(), {flag, ""});
    expect_bad_input(run_trainer(args), {flag, "empty"});
  }
}

}  // namespace
}  // namespace dpscale
