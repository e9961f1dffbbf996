// fashion_mnist.cpp — reads Fashion-MNIST's gzip-compressed IDX files (Debian's
// dataset-fashion-mnist installs them under /usr/share/datasets/fashion-mnist).
//
// IDX: a big-endian header — magic 0x00000803 (u8, 3-D images) or 0x00000801 (u8, 1-D labels),
// then one u32 per dimension — followed by the raw bytes.
#include <zlib.h>

#include <cmath>
#include <memory>

#include "dataset.h"
#include "core/errors.h"
#include "models/finite_check.h"
#include "models/memory_check.h"

namespace dpscale {

namespace {

std::vector<unsigned char> gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError("--data fashion-mnist: cannot open '" + path + "' (install dataset-fashion-mnist or pass --data-dir)");
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int errnum = 0;
      throw InputError("--data fashion-mnist: '" + path + "' is not a readable gzip file: " + gzerror(f, &errnum));
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
    // A small file can inflate without end (a gzip bomb): stop at the machine's memory.
    if (static_cast<uint64_t>(out.size()) > physical_memory_bytes() / 2) {
      throw InputError("--data fashion-mnist: '" + path + "' decompresses to more than " +
                       format_bytes(physical_memory_bytes() / 2) + " (half this machine's memory)");
    }
  }
  return out;
}

uint32_t be32(const std::vector<unsigned char>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// Returns the IDX payload and fills dims; checks magic, rank and size.
std::vector<unsigned char> read_idx(const std::string& path, uint32_t want_magic, std::vector<uint32_t>& dims) {
  std::vector<unsigned char> b = gunzip_file(path);
  const int rank = static_cast<int>(want_magic & 0xff);
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (b.size() < header) throw InputError("IDX '" + path + "': truncated header");
  if (be32(b, 0) != want_magic) {
    throw InputError("IDX '" + path + "': wrong magic number (expected a " + std::to_string(rank) + "-D unsigned-byte IDX file)");
  }
  std::optional<uint64_t> product = 1;
  dims.clear();
  for (int i = 0; i < rank; ++i) {
    dims.push_back(be32(b, 4 + 4 * static_cast<size_t>(i)));
    product = product ? checked_mul(*product, dims.back()) : std::nullopt;
  }
  // Three u32 dimensions can multiply past 64 bits: checked, never wrapped.
  if (!product) throw InputError("IDX '" + path + "': header declares a size that overflows 64 bits");
  const uint64_t count = *product;
  if (b.size() - header != count) {
    throw InputError("IDX '" + path + "': " + (b.size() - header < count ? "truncated" : "has trailing bytes") +
                     ": expected " + std::to_string(count) + " data bytes, found " + std::to_string(b.size() - header));
  }
  return {b.begin() + static_cast<std::ptrdiff_t>(header), b.end()};
}

std::string idx_path(const std::string& dir, const std::string& split, const char* kind) {
  return dir + "/" + split + "-" + kind + ".gz";
}

void load_split(const std::string& dir, const std::string& prefix, std::vector<unsigned char>& pixels,
                std::vector<int32_t>& labels, int64_t& n, int& dim) {
  std::vector<uint32_t> idims, ldims;
  pixels = read_idx(idx_path(dir, prefix, "images-idx3-ubyte"), 0x00000803, idims);
  std::vector<unsigned char> l = read_idx(idx_path(dir, prefix, "labels-idx1-ubyte"), 0x00000801, ldims);
  if (idims[0] != ldims[0]) {
    throw InputError("Fashion-MNIST " + prefix + ": " + std::to_string(idims[0]) + " images but " +
                     std::to_string(ldims[0]) + " labels");
  }
  n = idims[0];
  // The payload matched the header, so rows × 784-ish fits; but one row must fit an int width.
  if (uint64_t{idims[1]} * idims[2] > (1u << 16)) {
    throw InputError("Fashion-MNIST " + prefix + ": images of " + std::to_string(idims[1]) + "x" +
                     std::to_string(idims[2]) + " pixels are larger than any model input (at most 65536)");
  }
  dim = static_cast<int>(idims[1] * idims[2]);
  labels.assign(l.begin(), l.end());
}

}  // namespace

std::vector<std::string> fashion_mnist_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const char* split : {"train", "t10k"}) {
    for (const char* kind : {"images-idx3-ubyte", "labels-idx1-ubyte"}) files.push_back(idx_path(dir, split, kind));
  }
  return files;
}

Dataset load_fashion_mnist(const std::string& dir, int64_t samples) {
  Dataset d;
  d.kind = "fashion-mnist";
  std::vector<unsigned char> train_px, test_px;
  int test_dim = 0;
  load_split(dir, "train", train_px, d.y, d.n, d.dim);
  load_split(dir, "t10k", test_px, d.test_y, d.n_test, test_dim);
  if (test_dim != d.dim) throw InputError("Fashion-MNIST: train and test images differ in size");
  if (samples > d.n) {
    throw InputError("--samples " + std::to_string(samples) + " exceeds the " + std::to_string(d.n) +
                     " Fashion-MNIST training images");
  }
  if (samples > 0) {
    d.n = samples;
    d.y.resize(static_cast<size_t>(samples));
    train_px.resize(static_cast<size_t>(samples) * d.dim);
  }
  // Scale to [0, 1], then standardise with the (used) training set's mean and std.
  double sum = 0.0, sq = 0.0;
  for (unsigned char p : train_px) {
    const double v = p / 255.0;
    sum += v;
    sq += v * v;
  }
  const double count = static_cast<double>(train_px.size());
  const double mean = sum / count;
  const double sd = std::sqrt(std::max(sq / count - mean * mean, 1e-12));
  auto convert = [&](const std::vector<unsigned char>& px, std::vector<float>& out) {
    out.resize(px.size());
    for (size_t i = 0; i < px.size(); ++i) out[i] = static_cast<float>((px[i] / 255.0 - mean) / sd);
  };
  convert(train_px, d.x);
  convert(test_px, d.test_x);
  // Bytes cannot be NaN, but the standardisation divides: keep the promise that no non-finite
  // value enters training from any dataset, naming the file as the npy check does.
  for (auto [x, file] : {std::pair{&d.x, "train"}, std::pair{&d.test_x, "t10k"}}) {
    if (const int64_t i = first_nonfinite(x->data(), static_cast<int64_t>(x->size())); i >= 0) {
      throw InputError("IDX '" + dir + "/" + file + "-images-idx3-ubyte.gz': non-finite value after scaling at image " +
                       std::to_string(i / d.dim) + ", pixel " + std::to_string(i % d.dim));
    }
  }
  return d;
}

}  // namespace dpscale
