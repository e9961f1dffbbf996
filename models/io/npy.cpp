// npy.cpp — the .npy format: magic "\x93NUMPY", version, header length (2 bytes in v1, 4 in
// v2/v3, little-endian), a Python-literal dict {'descr', 'fortran_order', 'shape'} padded so
// the data starts on a 64-byte boundary, then the raw array.
#include "models/io/npy.h"

#include <charconv>
#include <cstring>
#include <regex>

#include "models/io/atomic_file.h"
#include "core/errors.h"
#include "models/finite_check.h"
#include "models/memory_check.h"

namespace dpscale {

namespace {

std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted = "'" + key + "'";
  size_t k = header.find(quoted);
  if (k == std::string::npos) throw InputError("npy '" + path + "': header has no '" + key + "'");
  size_t colon = header.find(':', k + quoted.size());
  if (colon == std::string::npos) throw InputError("npy '" + path + "': malformed header");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) throw InputError("npy '" + path + "': malformed header");
  size_t end;
  if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end == std::string::npos) throw InputError("npy '" + path + "': malformed header");
    return header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) throw InputError("npy '" + path + "': malformed header");
    return header.substr(start, end - start + 1);
  }
  end = header.find_first_of(",}", start);
  if (end == std::string::npos) throw InputError("npy '" + path + "': malformed header");
  return header.substr(start, end - start);
}

size_t itemsize(const std::string& descr) {
  if (descr == "<f4" || descr == "<i4") return 4;
  if (descr == "<i8" || descr == "<f8") return 8;
  return 0;
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::vector<char> bytes = read_whole_file(path, "npy");
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    throw InputError("npy '" + path + "': not a .npy file (bad magic)");
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError("npy '" + path + "': truncated header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    throw InputError("npy '" + path + "': unsupported format version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size()) throw InputError("npy '" + path + "': truncated header");
  const std::string header(bytes.data() + header_start, header_len);

  NpyArray arr;
  arr.descr = dict_value(header, "descr", path);
  if (dict_value(header, "fortran_order", path) != "False") {
    throw InputError("npy '" + path + "': Fortran-ordered arrays are not supported (save with C order)");
  }
  const std::string shape = dict_value(header, "shape", path);
  static const std::regex int_re("[0-9]+");
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), int_re); it != std::sregex_iterator(); ++it) {
    const std::string digits = it->str();
    int64_t d = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      throw InputError("npy '" + path + "': dimension " + digits + " of shape " + shape + " is too large (beyond 2^63)");
    }
    arr.shape.push_back(d);
  }
  const size_t isz = itemsize(arr.descr);
  if (isz == 0) throw InputError("npy '" + path + "': unsupported dtype '" + arr.descr + "'");
  // The byte count the shape declares, checked (found by fuzz/fuzz_npy.cpp): an overflowing
  // product used to wrap to a small number, so a tiny file declaring 2^62 rows was accepted and
  // its consumer then tried to allocate them. A count that fits is held against the file's size.
  size_t expect = isz;
  for (int64_t d : arr.shape) {
    if (__builtin_mul_overflow(expect, static_cast<size_t>(d), &expect)) {
      throw InputError("npy '" + path + "': shape " + shape + " declares more bytes than can exist (its byte size overflows 64 bits)");
    }
  }
  const size_t data_start = header_start + header_len;
  if (bytes.size() - data_start < expect) {
    throw InputError("npy '" + path + "': truncated: expected " + std::to_string(expect) +
                     " data bytes, found " + std::to_string(bytes.size() - data_start));
  }
  if (bytes.size() - data_start > expect) {
    throw InputError("npy '" + path + "': " + std::to_string(bytes.size() - data_start - expect) +
                     " unexpected bytes after the data");
  }
  arr.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return arr;
}

void write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
               const void* data, size_t nbytes) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces and a newline so magic(6)+version(2)+len(2)+header is a multiple of 64.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>((header.size() >> 8) & 0xff);
  write_file_atomically(path, {prefix, header, std::string_view(static_cast<const char*>(data), nbytes)}, "npy");
}

void load_npy_dataset(const std::string& features_path, const std::string& labels_path,
                      std::vector<float>& x, int64_t& n, int& dim, std::vector<int32_t>& y) {
  if (features_path.empty() || labels_path.empty()) {
    throw InputError("--data npy needs both --features F.npy and --labels L.npy");
  }
  NpyArray f = read_npy(features_path);
  if (f.descr != "<f4") {
    throw InputError("npy '" + features_path + "': features must be float32 ('<f4'), found '" + f.descr + "'");
  }
  if (f.shape.size() != 2) {
    throw InputError("npy '" + features_path + "': features must be 2-D [N, in_width], found " +
                     std::to_string(f.shape.size()) + "-D");
  }
  // No rows or no columns: nothing to train on, and an empty vector's data() is null, which
  // memcpy may not be given even for 0 bytes (fuzz_npy found [2, 0] under UBSan).
  if (f.shape[0] < 1 || f.shape[1] < 1) {
    throw InputError("npy '" + features_path + "': features must have at least one row and one column, found [" +
                     std::to_string(f.shape[0]) + ", " + std::to_string(f.shape[1]) + "]");
  }
  NpyArray l = read_npy(labels_path);
  if (l.descr != "<i4" && l.descr != "<i8") {
    throw InputError("npy '" + labels_path + "': labels must be int32 or int64, found '" + l.descr + "'");
  }
  if (l.shape.size() != 1) {
    throw InputError("npy '" + labels_path + "': labels must be 1-D [N], found " +
                     std::to_string(l.shape.size()) + "-D");
  }
  if (l.shape[0] != f.shape[0]) {
    throw InputError("npy: " + std::to_string(f.shape[0]) + " feature rows but " +
                     std::to_string(l.shape[0]) + " labels");
  }
  n = f.shape[0];
  dim = static_cast<int>(f.shape[1]);
  x.resize(static_cast<size_t>(n) * dim);
  std::memcpy(x.data(), f.data.data(), x.size() * sizeof(float));  // not empty: checked above
  // A NaN feature trains silently otherwise: ReLU maps it to 0 and the loss stays finite while
  // layer 0's weights turn NaN.
  if (const int64_t i = first_nonfinite(x.data(), static_cast<int64_t>(x.size())); i >= 0) {
    throw InputError("npy '" + features_path + "': non-finite feature (" + nonfinite_name(x[static_cast<size_t>(i)]) +
                     ") at row " + std::to_string(i / dim) + ", column " + std::to_string(i % dim) +
                     " (element " + std::to_string(i) + ")");
  }
  y.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    if (l.descr == "<i4") {
      int32_t v32;
      std::memcpy(&v32, l.data.data() + i * 4, 4);
      v = v32;
    } else {
      std::memcpy(&v, l.data.data() + i * 8, 8);
    }
    if (v < INT32_MIN || v > INT32_MAX) {
      throw InputError("npy '" + labels_path + "': label " + std::to_string(v) + " at row " + std::to_string(i) + " is out of range");
    }
    y[static_cast<size_t>(i)] = static_cast<int32_t>(v);
  }
}

}  // namespace dpscale
