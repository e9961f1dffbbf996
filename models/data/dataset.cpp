// dataset.cpp — synthetic data, the dataset dispatcher and its validation.
#include "dataset.h"

#include <unistd.h>

#include <cstdio>

#include "core/errors.h"
#include "models/io/npy.h"
#include "rng.h"

namespace dpscale {

Dataset make_synthetic(int64_t n, int dim, int n_classes, uint64_t seed) {
  Dataset d;
  d.kind = "synthetic";
  d.n = n;
  d.dim = dim;
  d.x.resize(static_cast<size_t>(n) * dim);
  d.y.resize(static_cast<size_t>(n));
  const CounterRng xr(seed, 0x5EED0000), yr(seed, 0x5EED0001);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = xr.normal(i);
  for (int64_t i = 0; i < n; ++i) d.y[static_cast<size_t>(i)] = static_cast<int32_t>(yr.below(i, n_classes));
  return d;
}

namespace {
void check_labels(const std::vector<int32_t>& y, int n_classes, const std::string& what) {
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] < 0 || y[i] >= n_classes) {
      throw InputError(what + ": label " + std::to_string(y[i]) + " at row " + std::to_string(i) +
                       " is outside [0, " + std::to_string(n_classes) + ") for this model's output width");
    }
  }
}
}  // namespace

Dataset load_dataset(const DataOptions& opts, int in_width, int n_classes) {
  if (opts.samples < 0) throw InputError("--samples must not be negative (got " + std::to_string(opts.samples) + ")");
  Dataset d;
  if (opts.kind == "synthetic") {
    // Refuse what cannot fit in memory up front: otherwise the allocation fails (bad_alloc, an
    // internal error) or, with overcommit, the OOM killer ends the run without a message.
    const int64_t n = opts.samples ? opts.samples : kDefaultSyntheticSamples;
    const double need_gib = static_cast<double>(n) * (in_width + 1.0) * 4.0 / (1 << 30);
    const double have_gib = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE) / (1 << 30);
    if (have_gib > 0 && need_gib > have_gib) {
      char msg[160];
      std::snprintf(msg, sizeof msg, ": synthetic data would need %.1f GiB, more than this machine's %.1f GiB of memory",
                    need_gib, have_gib);
      throw InputError("--samples " + std::to_string(n) + msg);
    }
    d = make_synthetic(n, in_width, n_classes, opts.seed);
  } else if (opts.kind == "fashion-mnist") {
    d = load_fashion_mnist(opts.data_dir, opts.samples);
  } else if (opts.kind == "npy") {
    d.kind = "npy";
    load_npy_dataset(opts.features, opts.labels, d.x, d.n, d.dim, d.y);
    if (opts.samples > d.n) {
      throw InputError("--samples " + std::to_string(opts.samples) + " exceeds the " + std::to_string(d.n) +
                       " rows of '" + opts.features + "'");
    }
    if (opts.samples) {
      d.n = opts.samples;
      d.x.resize(static_cast<size_t>(d.n) * d.dim);
      d.y.resize(static_cast<size_t>(d.n));
    }
  } else if (opts.kind == "text") {
    throw InputError("--data text is byte-level tokens: it needs a transformer --model (gpt-tiny, gpt2-small, gpt:...)");
  } else {
    throw InputError("--data: unknown dataset '" + opts.kind + "' (use synthetic, fashion-mnist or npy)");
  }
  if (d.dim != in_width) {
    throw InputError("--data " + d.kind + ": samples have " + std::to_string(d.dim) +
                     " features but the model's input width is " + std::to_string(in_width));
  }
  check_labels(d.y, n_classes, "--data " + d.kind);
  check_labels(d.test_y, n_classes, "--data " + d.kind + " (test split)");
  if (d.n == 0) throw InputError("--data " + d.kind + ": the dataset is empty");
  return d;
}

}  // namespace dpscale
