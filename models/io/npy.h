// npy.h — reading and writing NumPy .npy files (format versions 1.0–3.0, C order only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpscale {

struct NpyArray {
  std::string descr;            // e.g. "<f4", "<i8"
  std::vector<int64_t> shape;
  std::vector<char> data;       // raw little-endian bytes, C order
};

// Throws InputError naming the file for a missing, truncated, Fortran-ordered or malformed file.
NpyArray read_npy(const std::string& path);
// Writes atomically (temporary file, then rename).
void write_npy(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
               const void* data, size_t nbytes);

// Features [N, dim] float32 and labels [N] int32/int64 as the `npy` dataset takes them.
void load_npy_dataset(const std::string& features_path, const std::string& labels_path,
                      std::vector<float>& x, int64_t& n, int& dim, std::vector<int32_t>& y);

}  // namespace dpscale
