// fuzz_safetensors.cpp — libFuzzer target for safetensors files (models/io/safetensors.cpp
// read_safetensors, and load_checkpoint into the layout of a small MLP 4,3,2). An accepted
// file's tensors hold exactly their shape's bytes; a loaded checkpoint fills the whole layout.
//   build/fuzz/fuzz_safetensors fuzz/corpus/safetensors
#include "fuzz_input.h"
#include "core/errors.h"
#include "models/io/safetensors.h"
#include "models/mlp_spec.h"
#include "models/param_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  static fuzz::ScratchFile file("in.safetensors");
  static const MlpSpec spec = parse_model("4,3,2");
  static const ParamLayout layout(spec);
  const std::string& path = file.write(fuzz::text_of(data, size));
  try {
    const StFile f = read_safetensors(path);
    for (const auto& [name, t] : f.tensors) {
      size_t items = 1;
      for (int64_t d : t.shape) items *= static_cast<size_t>(d);
      (void)name;
      fuzz::require(t.dtype != "F32" || t.bytes.size() == items * 4);
    }
  } catch (const InputError&) {
  }
  try {
    const std::vector<float> params = load_checkpoint(path, layout);
    fuzz::require(static_cast<int64_t>(params.size()) == layout.param_buffer_count());
  } catch (const InputError&) {
  }
  return 0;
}
