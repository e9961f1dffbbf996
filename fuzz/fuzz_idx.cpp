// fuzz_idx.cpp — libFuzzer target for Fashion-MNIST's IDX files (models/data/fashion_mnist.cpp,
// through load_fashion_mnist: gzip via zlib, IDX header, sizes, train/test agreement).
// The input is four chunks, each a little-endian u32 length then its bytes: train images,
// train labels, t10k images, t10k labels (gzip or plain: zlib reads plain files as they are).
// An accepted set has one label per image and finite standardised pixels.
//   build/fuzz/fuzz_idx fuzz/corpus/idx
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "fuzz_input.h"
#include "models/data/dataset.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  static const char* names[4] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
  static fuzz::ScratchFile dir("idx");
  static const bool made = ::mkdir(dir.path().c_str(), 0700) == 0 || errno == EEXIST;
  (void)made;
  const std::string text = fuzz::text_of(data, size);
  size_t at = 0;
  for (const char* name : names) {
    uint32_t len = 0;
    if (at + 4 <= text.size()) {
      for (int i = 3; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(text[at + static_cast<size_t>(i)]);
      at += 4;
    }
    const std::string chunk = text.substr(std::min(at, text.size()), len);
    at += chunk.size();
    std::ofstream(dir.path() + "/" + name, std::ios::binary | std::ios::trunc) << chunk;
  }
  try {
    const Dataset d = load_fashion_mnist(dir.path(), 0);
    fuzz::require(static_cast<int64_t>(d.y.size()) == d.n && static_cast<int64_t>(d.x.size()) == d.n * d.dim);
    fuzz::require(static_cast<int64_t>(d.test_y.size()) == d.n_test);
    for (float v : d.x) fuzz::require(std::isfinite(v));
  } catch (const InputError&) {
  }
  return 0;
}
