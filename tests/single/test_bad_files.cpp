// test_bad_files.cpp — bad data and checkpoint files given to train_single_gpu: missing,
// truncated, wrong-typed .npy; missing, truncated, wrong-magic Fashion-MNIST IDX files (crafted
// in a temporary --data-dir); missing, truncated, non-JSON and mismatched safetensors for --init.
// Each exits 2 with one line naming the problem. Every crafted set has a positive control: the
// same files, undamaged, train fine, so each failure is caused by the one defect introduced.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <fstream>

#include "models/io/npy.h"
#include "models/param_layout.h"
#include "models/data/rng.h"
#include "models/io/safetensors.h"
#include "single_run.h"

namespace dpscale {
namespace {

using test::expect_bad_input;
using test::run_trainer;
using test::tiny_run;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void expect_ok(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  EXPECT_NE(r.out.find("RESULTS_JSON: "), std::string::npos);
}

// ---------------------------------------------------------------- npy
class SingleBadNpy : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::vector<float> x(64 * 784);
    const CounterRng r(1, 1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = r.normal(i);
    std::vector<int64_t> y(64);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i % 10);
    write_npy(path("x.npy"), "<f4", {64, 784}, x.data(), x.size() * 4);
    write_npy(path("y.npy"), "<i8", {64}, y.data(), y.size() * 8);
  }
  ProcessResult run(const std::string& features, const std::string& labels) {
    return run_trainer(tiny_run({{"--data", "npy"}, {"--features", path(features)}, {"--labels", path(labels)},
                                 {"--samples", "-"}}));
  }
};

TEST_F(SingleBadNpy, ControlTheGoodFilesTrain) { expect_ok(run("x.npy", "y.npy")); }

TEST_F(SingleBadNpy, MissingFile) { expect_bad_input(run("absent.npy", "y.npy"), {"cannot open", "absent.npy"}); }

TEST_F(SingleBadNpy, MissingLabelsOption) {
  expect_bad_input(run_trainer(tiny_run({{"--data", "npy"}, {"--features", path("x.npy")}, {"--samples", "-"}})),
                   {"--labels"});
}

TEST_F(SingleBadNpy, TruncatedData) {
  const std::string good = slurp(path("x.npy"));
  spit(path("cut.npy"), good.substr(0, good.size() - 100));
  expect_bad_input(run("cut.npy", "y.npy"), {"cut.npy", "truncated"});
}

TEST_F(SingleBadNpy, TruncatedHeader) {
  spit(path("cut.npy"), slurp(path("x.npy")).substr(0, 40));
  expect_bad_input(run("cut.npy", "y.npy"), {"cut.npy", "truncated header"});
}

TEST_F(SingleBadNpy, NotAnNpyFile) {
  spit(path("text.npy"), "label,pixel0,pixel1\n1,0,0\n");
  expect_bad_input(run("text.npy", "y.npy"), {"text.npy", "bad magic"});
}

TEST_F(SingleBadNpy, Float64Features) {
  std::vector<double> x(64 * 784, 0.5);
  write_npy(path("x64.npy"), "<f8", {64, 784}, x.data(), x.size() * 8);
  expect_bad_input(run("x64.npy", "y.npy"), {"x64.npy", "float32", "<f8"});
}

TEST_F(SingleBadNpy, FloatLabels) {
  std::vector<float> y(64, 1.0f);
  write_npy(path("yf.npy"), "<f4", {64}, y.data(), y.size() * 4);
  expect_bad_input(run("x.npy", "yf.npy"), {"yf.npy", "int32 or int64", "<f4"});
}

TEST_F(SingleBadNpy, LabelOutOfRange) {
  std::vector<int32_t> y(64, 3);
  y[17] = 10;
  write_npy(path("y10.npy"), "<i4", {64}, y.data(), y.size() * 4);
  expect_bad_input(run("x.npy", "y10.npy"), {"label 10", "row 17"});
}

TEST_F(SingleBadNpy, RowCountMismatch) {
  std::vector<int32_t> y(60, 1);
  write_npy(path("y60.npy"), "<i4", {60}, y.data(), y.size() * 4);
  expect_bad_input(run("x.npy", "y60.npy"), {"64 feature rows but 60 labels"});
}

TEST_F(SingleBadNpy, FeatureWidthDoesNotMatchModel) {
  expect_bad_input(run_trainer(tiny_run({{"--model", "100,8,10"}, {"--data", "npy"}, {"--features", path("x.npy")},
                                         {"--labels", path("y.npy")}, {"--samples", "-"}})),
                   {"784 features", "input width is 100"});
}

TEST_F(SingleBadNpy, FeaturesAreADirectory) {
  std::filesystem::create_directory(path("d.npy"));
  expect_bad_input(run("d.npy", "y.npy"), {"d.npy"});
}

// ---------------------------------------------------------------- Fashion-MNIST IDX
// A miniature Fashion-MNIST (64 train, 16 test images of 28x28) as gzip IDX files.
class SingleBadIdx : public test::TempDirTest {
 protected:
  static std::string be32(uint32_t v) {
    return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
  }
  static std::string images(uint32_t n) {
    std::string s = be32(0x00000803) + be32(n) + be32(28) + be32(28);
    for (uint32_t i = 0; i < n * 784; ++i) s += static_cast<char>((i * 37 + i / 784 * 11) & 0xff);
    return s;
  }
  static std::string labels(uint32_t n) {
    std::string s = be32(0x00000801) + be32(n);
    for (uint32_t i = 0; i < n; ++i) s += static_cast<char>(i % 10);
    return s;
  }
  void gz(const std::string& name, const std::string& bytes) {
    gzFile f = gzopen(path(name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  void SetUp() override {
    TempDirTest::SetUp();
    gz("train-images-idx3-ubyte.gz", images(64));
    gz("train-labels-idx1-ubyte.gz", labels(64));
    gz("t10k-images-idx3-ubyte.gz", images(16));
    gz("t10k-labels-idx1-ubyte.gz", labels(16));
  }
  ProcessResult run() {
    return run_trainer(tiny_run({{"--data", "fashion-mnist"}, {"--data-dir", dir_.string()}, {"--samples", "-"}}));
  }
};

TEST_F(SingleBadIdx, ControlTheCraftedFilesTrain) {
  const ProcessResult r = run();
  expect_ok(r);
  EXPECT_NE(r.out.find("\"n_samples\":64"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"test_accuracy\":null"), std::string::npos) << "the test split is used";
}

TEST_F(SingleBadIdx, MissingDirectory) {
  expect_bad_input(run_trainer(tiny_run({{"--data", "fashion-mnist"}, {"--data-dir", path("nowhere")}})),
                   {"cannot open", "train-images-idx3-ubyte.gz"});
}

TEST_F(SingleBadIdx, MissingTestLabels) {
  std::filesystem::remove(path("t10k-labels-idx1-ubyte.gz"));
  expect_bad_input(run(), {"cannot open", "t10k-labels-idx1-ubyte.gz"});
}

TEST_F(SingleBadIdx, TruncatedImages) {
  gz("train-images-idx3-ubyte.gz", images(64).substr(0, 16 + 63 * 784 + 100));
  expect_bad_input(run(), {"train-images-idx3-ubyte.gz", "truncated"});
}

TEST_F(SingleBadIdx, TruncatedHeader) {
  gz("train-labels-idx1-ubyte.gz", labels(64).substr(0, 6));
  expect_bad_input(run(), {"train-labels-idx1-ubyte.gz", "truncated header"});
}

TEST_F(SingleBadIdx, TruncatedGzipStream) {
  const std::string whole = slurp(path("train-images-idx3-ubyte.gz"));
  spit(path("train-images-idx3-ubyte.gz"), whole.substr(0, whole.size() / 2));
  expect_bad_input(run(), {"train-images-idx3-ubyte.gz"});
}

TEST_F(SingleBadIdx, WrongMagic) {
  std::string bad = images(64);
  bad[3] = 0x08;  // 0x00000808: not a 3-D unsigned-byte IDX file
  gz("train-images-idx3-ubyte.gz", bad);
  expect_bad_input(run(), {"train-images-idx3-ubyte.gz", "wrong magic"});
}

TEST_F(SingleBadIdx, LabelsWhereImagesShouldBe) {
  gz("t10k-images-idx3-ubyte.gz", labels(16));
  expect_bad_input(run(), {"t10k-images-idx3-ubyte.gz"});
}

TEST_F(SingleBadIdx, ImageAndLabelCountsDiffer) {
  gz("train-labels-idx1-ubyte.gz", labels(60));
  expect_bad_input(run(), {"64 images but 60 labels"});
}

TEST_F(SingleBadIdx, LabelOutOfRange) {
  std::string l = labels(64);
  l[8 + 5] = 12;
  gz("train-labels-idx1-ubyte.gz", l);
  expect_bad_input(run(), {"label 12", "row 5"});
}

// ---------------------------------------------------------------- safetensors --init
class SingleBadInit : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    save(path("good.safetensors"), {784, 8, 10});
  }
  static void save(const std::string& p, const std::vector<int>& widths) {
    const MlpSpec spec{"custom", widths};
    const ParamLayout layout(spec);
    std::vector<float> w(static_cast<size_t>(layout.param_buffer_count()));  // the padding is not written
    const CounterRng r(2, 2);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * r.normal(i);
    save_checkpoint(p, spec, layout, w);
  }
  ProcessResult run(const std::string& name) { return run_trainer(tiny_run({{"--init", path(name)}})); }
};

TEST_F(SingleBadInit, ControlTheGoodCheckpointTrains) { expect_ok(run("good.safetensors")); }

TEST_F(SingleBadInit, MissingFile) { expect_bad_input(run("absent.safetensors"), {"cannot open", "absent.safetensors"}); }

TEST_F(SingleBadInit, TruncatedTensorData) {
  const std::string good = slurp(path("good.safetensors"));
  spit(path("cut.safetensors"), good.substr(0, good.size() - 10));
  expect_bad_input(run("cut.safetensors"), {"cut.safetensors", "truncated"});
}

TEST_F(SingleBadInit, TruncatedHeaderLength) {
  spit(path("cut.safetensors"), slurp(path("good.safetensors")).substr(0, 5));
  expect_bad_input(run("cut.safetensors"), {"cut.safetensors", "truncated"});
}

TEST_F(SingleBadInit, TruncatedHeader) {
  spit(path("cut.safetensors"), slurp(path("good.safetensors")).substr(0, 40));
  expect_bad_input(run("cut.safetensors"), {"cut.safetensors", "truncated"});
}

TEST_F(SingleBadInit, HeaderIsNotJson) {
  std::string good = slurp(path("good.safetensors"));
  good[8] = 'X';  // the header's opening brace
  spit(path("nojson.safetensors"), good);
  expect_bad_input(run("nojson.safetensors"), {"nojson.safetensors", "not valid JSON"});
}

TEST_F(SingleBadInit, ShapesDoNotMatchTheModel) {
  save(path("wide.safetensors"), {784, 16, 10});
  expect_bad_input(run("wide.safetensors"), {"wide.safetensors", "layers.", "has shape", "the model needs"});
}

TEST_F(SingleBadInit, DeeperCheckpointThanModel) {
  save(path("deep.safetensors"), {784, 8, 8, 10});
  expect_bad_input(run("deep.safetensors"), {"deep.safetensors", "layers."});
}

}  // namespace
}  // namespace dpscale
