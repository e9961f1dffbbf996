// dataset.h — training data held on the host: synthetic, Fashion-MNIST (IDX), or .npy files.
//
// Every rank loads the whole dataset (as the workshop does) and takes its shard per batch, so
// loading is deterministic and identical on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpscale {

struct Dataset {
  std::string kind;               // "synthetic" | "fashion-mnist" | "npy" | "text" (token_data.h)
  int64_t n = 0;                  // training samples
  int dim = 0;                    // features per sample
  std::vector<float> x;           // [n, dim], row-major
  std::vector<int32_t> y;         // [n], each in [0, n_classes)
  int64_t n_test = 0;             // held-out samples (0 when the dataset has no test split)
  std::vector<float> test_x;      // [n_test, dim]
  std::vector<int32_t> test_y;    // [n_test]
};

struct DataOptions {
  std::string kind = "synthetic";
  int64_t samples = 0;  // 0 = the dataset's default (synthetic: 32768; files: all)
  uint64_t seed = 42;
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string features;  // npy
  std::string labels;    // npy
  std::string tokens;    // npy, a transformer's token rows (token_data.h)
  std::string text;      // text, a byte-level corpus (token_data.h)
};

constexpr int64_t kDefaultSyntheticSamples = 32768;

// Loads and validates. in_width/n_classes come from the model: a dataset whose feature width
// differs, or a label outside [0, n_classes), is an InputError.
Dataset load_dataset(const DataOptions& opts, int in_width, int n_classes);

// The workshop's synthetic data: x ~ N(0, 1) of shape [n, dim], y uniform in [0, n_classes),
// from CounterRng(seed, streams 0x5EED0000 / 0x5EED0001).
Dataset make_synthetic(int64_t n, int dim, int n_classes, uint64_t seed);

// Fashion-MNIST from gzip IDX files in dir: pixels scaled to [0, 1] then standardised with the
// training set's mean and standard deviation; the 10k test split is kept for test accuracy.
Dataset load_fashion_mnist(const std::string& dir, int64_t samples);
// The files load_fashion_mnist reads from `dir` (train and test split, images and labels).
std::vector<std::string> fashion_mnist_files(const std::string& dir);

}  // namespace dpscale
