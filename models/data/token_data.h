// token_data.h — a transformer's training data: token sequences, one sample = seq_len inputs and
// the seq_len targets one position later.
//
// The Dataset (dataset.h) holds a sample's inputs in x ([n, seq_len] floats: token ids, whole
// numbers, exact below 2^24 — one dataset type and one loader for both models) and its targets
// in y ([n, seq_len] int32). Three sources:
//   synthetic  token j of sample i (j = 0..seq_len) uniform in [0, vocab) from
//              CounterRng(seed, 0x70CE0000) at index i·(seq_len + 1) + j: a sample depends on its
//              global index and the seed only, so K ranks see the batch one device sees
//   npy        --tokens FILE.npy, an integer array [N, seq_len + 1] (int32 or int64): row i's first
//              seq_len ids are sample i's input, its last seq_len its targets; taken in order
//   text       --text FILE, byte-level (ids are the bytes, vocabulary 256): sample i is bytes
//              [i·seq_len, i·seq_len + seq_len] of the file, windows side by side
// Every id is checked against the vocabulary; a bad file is one InputError.
#pragma once

#include <cstdint>
#include <string>

#include "dataset.h"

namespace dpscale {

Dataset make_synthetic_tokens(int64_t n, int seq_len, int vocab, uint64_t seed);
Dataset load_token_npy(const std::string& path, int seq_len, int vocab);
Dataset load_token_text(const std::string& path, int seq_len, int vocab);

// The dispatcher for a transformer: opts.kind synthetic | npy (opts.tokens) | text (opts.text);
// opts.samples limits the count as for the MLP's data.
Dataset load_token_dataset(const DataOptions& opts, int seq_len, int vocab);

}  // namespace dpscale
