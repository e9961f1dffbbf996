// token_data.cpp — synthetic token sequences, token .npy files and byte-level text (token_data.h).
#include "token_data.h"

#include <unistd.h>

#include <cstring>

#include "core/errors.h"
#include "models/io/atomic_file.h"
#include "models/io/npy.h"
#include "rng.h"

namespace dpscale {

namespace {

// Row i of `ids` ([n, seq_len + 1]) into the dataset's input and target rows.
template <class Id>
Dataset from_rows(const std::string& kind, const Id* ids, int64_t n, int seq_len, int vocab, const std::string& what) {
  Dataset d;
  d.kind = kind;
  d.n = n;
  d.dim = seq_len;
  d.x.resize(static_cast<size_t>(n) * seq_len);
  d.y.resize(static_cast<size_t>(n) * seq_len);
  const int64_t w = seq_len + 1;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      const int64_t id = static_cast<int64_t>(ids[i * w + j]);
      if (id < 0 || id >= vocab) {
        throw InputError(what + ": token " + std::to_string(id) + " at row " + std::to_string(i) + ", column " +
                         std::to_string(j) + " is outside [0, " + std::to_string(vocab) + ") for this model's vocabulary");
      }
      if (j < seq_len) d.x[static_cast<size_t>(i * seq_len + j)] = static_cast<float>(id);
      if (j > 0) d.y[static_cast<size_t>(i * seq_len + j - 1)] = static_cast<int32_t>(id);
    }
  }
  return d;
}

void check_memory(int64_t n, int seq_len) {
  const double need_gib = static_cast<double>(n) * seq_len * 8.0 / (1 << 30);
  const double have_gib = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE) / (1 << 30);
  if (have_gib > 0 && need_gib > have_gib) {
    throw InputError("--samples " + std::to_string(n) + ": token data would need " + std::to_string(need_gib) +
                     " GiB, more than this machine's memory");
  }
}

}  // namespace

Dataset make_synthetic_tokens(int64_t n, int seq_len, int vocab, uint64_t seed) {
  check_memory(n, seq_len);
  const CounterRng rng(seed, 0x70CE0000);
  const int64_t w = seq_len + 1;
  std::vector<int32_t> ids(static_cast<size_t>(n * w));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(rng.below(i, static_cast<uint32_t>(vocab)));
  return from_rows("synthetic", ids.data(), n, seq_len, vocab, "synthetic tokens");
}

Dataset load_token_npy(const std::string& path, int seq_len, int vocab) {
  const NpyArray a = read_npy(path);
  const std::string what = "--tokens '" + path + "'";
  if (a.descr != "<i4" && a.descr != "<i8") throw InputError(what + ": tokens must be int32 or int64, found '" + a.descr + "'");
  if (a.shape.size() != 2) throw InputError(what + ": tokens must be a 2-D array [N, seq_len + 1]");
  if (a.shape[1] != seq_len + 1) {
    throw InputError(what + ": rows hold " + std::to_string(a.shape[1]) + " tokens but --seq-len " +
                     std::to_string(seq_len) + " needs " + std::to_string(seq_len + 1));
  }
  const int64_t n = a.shape[0];
  // An empty array would reach memcpy with a null pointer and make an empty dataset.
  if (n == 0) throw InputError(what + ": tokens hold no rows (the array is [0, " + std::to_string(seq_len + 1) + "])");
  if (a.descr == "<i4") {
    std::vector<int32_t> ids(a.data.size() / 4);
    std::memcpy(ids.data(), a.data.data(), a.data.size());
    return from_rows("npy", ids.data(), n, seq_len, vocab, what);
  }
  std::vector<int64_t> ids(a.data.size() / 8);
  std::memcpy(ids.data(), a.data.data(), a.data.size());
  return from_rows("npy", ids.data(), n, seq_len, vocab, what);
}

Dataset load_token_text(const std::string& path, int seq_len, int vocab) {
  const std::string what = "--text '" + path + "'";
  if (vocab < 256) {
    throw InputError(what + ": byte-level text needs a vocabulary of at least 256, the model has " + std::to_string(vocab));
  }
  const std::vector<char> bytes = read_whole_file(path, "--text");
  const int64_t n = bytes.empty() ? 0 : (static_cast<int64_t>(bytes.size()) - 1) / seq_len;
  if (n < 1) {
    throw InputError(what + ": " + std::to_string(bytes.size()) + " bytes hold no sample of --seq-len " +
                     std::to_string(seq_len) + " (it needs " + std::to_string(seq_len + 1) + ")");
  }
  // Windows side by side, each one byte longer than seq_len: sample i ends where i + 1 begins.
  std::vector<int32_t> ids(static_cast<size_t>(n) * (seq_len + 1));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= seq_len; ++j) {
      ids[static_cast<size_t>(i * (seq_len + 1) + j)] = static_cast<unsigned char>(bytes[static_cast<size_t>(i * seq_len + j)]);
    }
  }
  return from_rows("text", ids.data(), n, seq_len, vocab, what);
}

Dataset load_token_dataset(const DataOptions& opts, int seq_len, int vocab) {
  if (opts.samples < 0) throw InputError("--samples must not be negative (got " + std::to_string(opts.samples) + ")");
  Dataset d;
  if (opts.kind == "synthetic") {
    d = make_synthetic_tokens(opts.samples ? opts.samples : kDefaultSyntheticSamples, seq_len, vocab, opts.seed);
  } else if (opts.kind == "npy") {
    if (opts.tokens.empty()) throw InputError("--data npy with a transformer --model needs --tokens FILE.npy");
    d = load_token_npy(opts.tokens, seq_len, vocab);
  } else if (opts.kind == "text") {
    if (opts.text.empty()) throw InputError("--data text needs --text FILE");
    d = load_token_text(opts.text, seq_len, vocab);
  } else {
    throw InputError("--data " + opts.kind + ": a transformer --model trains on synthetic, npy (--tokens) or text (--text)");
  }
  if (opts.samples > d.n) {
    throw InputError("--samples " + std::to_string(opts.samples) + " exceeds the " + std::to_string(d.n) +
                     " samples of --data " + d.kind);
  }
  if (opts.samples) {
    d.n = opts.samples;
    d.x.resize(static_cast<size_t>(d.n) * seq_len);
    d.y.resize(static_cast<size_t>(d.n) * seq_len);
  }
  if (d.n == 0) throw InputError("--data " + d.kind + ": the dataset is empty");
  return d;
}

}  // namespace dpscale
