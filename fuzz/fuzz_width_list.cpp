// fuzz_width_list.cpp — libFuzzer target for --model (models/mlp_spec.cpp parse_model): presets
// and width lists like "784,256,10". An accepted list renders back (widths_to_string) to text
// that parses to the same widths, and holds at least an input and an output width.
//   build/fuzz/fuzz_width_list fuzz/corpus/width_list   (scripts/fuzz.sh runs every target)
#include "fuzz_input.h"
#include "core/errors.h"
#include "models/mlp_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  MlpSpec spec;
  try {
    spec = parse_model(fuzz::text_of(data, size));
  } catch (const InputError&) {
    return 0;
  }
  fuzz::require(spec.widths.size() >= 2);
  fuzz::require(parse_model(widths_to_string(spec.widths)).widths == spec.widths);
  fuzz::require(spec.n_params() > 0);
  return 0;
}
