// fuzz_npy.cpp — libFuzzer target for .npy files (models/io/npy.cpp read_npy, and
// load_npy_dataset with the input as features and a fixed good labels file). An accepted array's
// data holds exactly product(shape) items.
//   build/fuzz/fuzz_npy fuzz/corpus/npy
#include "fuzz_input.h"
#include "core/errors.h"
#include "models/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  static fuzz::ScratchFile file("in.npy");
  static fuzz::ScratchFile labels("labels.npy");
  static const bool labels_written = [] {
    const int32_t y[2] = {0, 1};
    write_npy(labels.path(), "<i4", {2}, y, sizeof y);
    return true;
  }();
  (void)labels_written;
  const std::string& path = file.write(fuzz::text_of(data, size));
  try {
    const NpyArray a = read_npy(path);
    size_t items = 1;
    for (int64_t d : a.shape) items *= static_cast<size_t>(d);
    const size_t item = a.descr == "<f4" || a.descr == "<i4" ? 4 : 8;
    fuzz::require(a.data.size() == items * item);
  } catch (const InputError&) {
  }
  try {
    std::vector<float> x;
    std::vector<int32_t> y;
    int64_t n = 0;
    int dim = 0;
    load_npy_dataset(path, labels.path(), x, n, dim, y);
    fuzz::require(n == 2 && static_cast<int64_t>(x.size()) == n * dim && y.size() == 2);
  } catch (const InputError&) {
  }
  return 0;
}
