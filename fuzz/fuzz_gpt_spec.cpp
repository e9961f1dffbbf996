// fuzz_gpt_spec.cpp — libFuzzer target for a transformer's --model and --seq-len
// (models/model_spec.cpp parse_model_spec, models/gpt/gpt_spec.cpp parse_gpt): the presets
// gpt-tiny, gpt2-small, gpt2-medium and gpt:layers=L,dim=D,heads=H,vocab=V,context=C. The input
// is "MODEL\nSEQ_LEN" (no newline, or a SEQ_LEN that is not a small whole number: seq_len 0,
// the context).
//   build-fuzz/fuzz/fuzz_gpt_spec fuzz/corpus/gpt_spec   (scripts/fuzz.sh runs every target)
//
// What an accepted transformer must satisfy: dim divisible by heads; seq_len within 1..context;
// its key parses back to the same shape (a preset to itself, a spec to the same five numbers);
// its tensors are 12·L + 4 in number and hold n_params() floats together; the step's GEMMs and
// the replica's byte count are computed without overflow (UBSan) for a batch of one.
#include <charconv>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "fuzz_input.h"
#include "models/model_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  const std::string in = fuzz::text_of(data, size);
  const size_t nl = in.find('\n');
  const std::string model = in.substr(0, nl);
  int seq_len = 0;
  if (nl != std::string::npos) {
    const std::string s = in.substr(nl + 1);
    int v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size() && v >= -1 && v <= (1 << 16) + 1) seq_len = v;
  }
  if (!is_gpt_model(model)) return 0;  // the MLP's widths are fuzz_width_list's
  ModelSpec spec;
  try {
    spec = parse_model_spec(model, seq_len);
  } catch (const InputError&) {
    return 0;
  }
  fuzz::require(spec.is_gpt());
  const GptSpec& g = *spec.gpt;
  fuzz::require(g.layers >= 1 && g.dim >= 1 && g.heads >= 1 && g.vocab >= 2 && g.context >= 1);
  fuzz::require(g.dim % g.heads == 0);
  fuzz::require(g.seq_len >= 1 && g.seq_len <= g.context && (seq_len == 0 || g.seq_len == seq_len));
  const GptSpec back = parse_gpt(g.key(), g.seq_len);
  fuzz::require(back.layers == g.layers && back.dim == g.dim && back.heads == g.heads && back.vocab == g.vocab &&
                back.context == g.context && back.key() == g.key());
  const auto tensors = gpt_tensors(g);
  fuzz::require(static_cast<int64_t>(tensors.size()) == 12 * int64_t{g.layers} + 4);
  int64_t floats = 0;
  for (const TensorDesc& t : tensors) floats += int64_t{t.rows} * t.cols;
  fuzz::require(floats == g.n_params() && floats > 0);
  fuzz::require(!spec.step_gemms(1).empty());
  (void)spec.bytes(1, true);
  return 0;
}
