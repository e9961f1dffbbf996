// fuzz_token_data.cpp — libFuzzer target for a transformer's data files
// (models/data/token_data.cpp): --data npy --tokens FILE.npy (load_token_npy, an integer array
// [N, seq_len + 1]) and --data text --text FILE (load_token_text, byte-level), both read through
// load_token_dataset as the trainers call it. The input's first byte picks seq_len (1..8) and
// the vocabulary (256, 300, 2 or 50257; text needs at least 256); the rest is the file, tried as
// both kinds.
//   build-fuzz/fuzz/fuzz_token_data fuzz/corpus/token_data   (scripts/fuzz.sh runs every target)
//
// What an accepted file must give: at least one sample; seq_len inputs and seq_len targets per
// sample; every id a whole number in [0, vocab); and each sample's targets its inputs one
// position on (input j + 1 is target j), as both formats promise.
#include <cmath>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "fuzz_input.h"
#include "models/data/token_data.h"

namespace {

void check(const dpscale::Dataset& d, int seq_len, int vocab) {
  using dpscale::fuzz::require;
  require(d.n >= 1 && d.dim == seq_len);
  require(d.x.size() == static_cast<size_t>(d.n) * seq_len && d.y.size() == d.x.size());
  for (size_t k = 0; k < d.x.size(); ++k) {
    const float x = d.x[k];
    require(x >= 0 && x < vocab && std::floor(x) == x);
    require(d.y[k] >= 0 && d.y[k] < vocab);
    if ((k + 1) % seq_len != 0) require(static_cast<int32_t>(d.x[k + 1]) == d.y[k]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dpscale;
  if (size < 1) return 0;
  static fuzz::ScratchFile file("tokens");
  static const int kVocabs[] = {256, 300, 2, 50257};
  const int seq_len = 1 + (data[0] & 7);
  const int vocab = kVocabs[(data[0] >> 3) & 3];
  const std::string& path = file.write(fuzz::text_of(data + 1, size - 1));
  DataOptions opts;
  opts.tokens = path;
  opts.text = path;
  for (const char* kind : {"npy", "text"}) {
    opts.kind = kind;
    try {
      check(load_token_dataset(opts, seq_len, vocab), seq_len, vocab);
    } catch (const InputError&) {
    }
  }
  return 0;
}
