// fuzz_link_spec.cpp — libFuzzer target for --link and --link-dilation (contract/link_model.cpp
// parse_link, parse_dilation). The input is "LINK\nDILATION" (no newline: the whole input is
// tried as both). Accepted values are finite and positive where the model divides by them.
//   build/fuzz/fuzz_link_spec fuzz/corpus/link_spec
#include <cmath>

#include "contract/link_model.h"
#include "fuzz_input.h"
#include "models/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  const std::string text = fuzz::text_of(data, size);
  const size_t nl = text.find('\n');
  const std::string link = text.substr(0, nl), dilation = nl == std::string::npos ? text : text.substr(nl + 1);
  try {
    const LinkModel m = parse_link(link);
    fuzz::require(std::isfinite(m.alpha_us) && m.alpha_us >= 0);
    fuzz::require(std::isfinite(m.gbps) && m.gbps >= 0);
    fuzz::require(m.name == "none" || m.gbps > 0);
  } catch (const InputError&) {
  }
  try {
    const DilationSpec d = parse_dilation(dilation);
    fuzz::require(std::isfinite(d.factor) && d.factor > 0);
    fuzz::require(std::isfinite(d.auto_tflops) && d.auto_tflops >= 0);
  } catch (const InputError&) {
  }
  return 0;
}
