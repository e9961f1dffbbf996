// cpu_device.cpp — CPU backend implementation.
//
// GEMMs go to the device's GEMM library in row-major mode (models/gemm/gemm_library.h), so no
// transposition trick is needed here (the CUDA backend, whose cuBLAS is column-major, does it
// instead). The saxpy of gradient accumulation stays OpenBLAS's, whatever the GEMM library. Element-wise passes are simple loops
// over the shared functions of elementwise.h; the compiler vectorises them.
#include "cpu_device.h"

#include <cblas.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

#include "../elementwise.h"
#include "core/errors.h"
#include "../finite_check.h"
#include "../memory_check.h"

namespace dpscale {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(' ', colon + 1);
        if (start != std::string::npos) return line.substr(start);
      }
    }
  }
  return "unknown CPU";
}

CpuDevice::CpuDevice(int threads) : CpuDevice(threads, make_gemm_library("openblas", threads), "requested", "") {}

CpuDevice::CpuDevice(int threads, std::unique_ptr<GemmLibrary> gemm, std::string choice, std::string passed_over)
    : gemm_(std::move(gemm)) {
  if (threads < 1) throw InputError("--threads must be at least 1 (got " + std::to_string(threads) + ")");
  openblas_set_num_threads(threads);  // the saxpy's (and the GEMMs' when the library is OpenBLAS)
  name_ = cpu_model_name() + " (" + std::to_string(threads) + " BLAS thread" +
          (threads == 1 ? "" : "s") + ")";
  report_ = {gemm_->info(), std::move(choice), std::move(passed_over)};
}

void* CpuDevice::alloc_bytes(size_t nbytes) {
  // 256-byte alignment, as cudaMalloc gives: with the layout's 256-byte tensor offsets every
  // tensor then starts on whole cache lines (and what AVX-512 loads like) on this backend too.
  const size_t rounded = ((nbytes + 255) / 256) * 256;
  void* p = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
  if (!p) throw std::bad_alloc();
  return p;
}
void CpuDevice::free_bytes(void* p) noexcept { std::free(p); }
void CpuDevice::upload(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
void CpuDevice::download(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
void CpuDevice::copy(void* dst, const void* src, size_t n) { std::memmove(dst, src, n); }
void CpuDevice::fill(float* x, float value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}

int64_t CpuDevice::page_bytes() const {
  static const int64_t page = sysconf(_SC_PAGESIZE);
  return page;
}

int64_t CpuDevice::release_pages(float* p, int64_t count) {
  // Only whole pages: the partial ones at either end hold bytes the caller keeps (its own shard,
  // the next unit). MADV_DONTNEED on private anonymous memory (every host allocation here) frees
  // the frames now; the next touch maps a zero page.
  const uintptr_t page = static_cast<uintptr_t>(page_bytes());
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = reinterpret_cast<uintptr_t>(p + count) / page * page;
  if (count <= 0 || end <= begin) return 0;
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) != 0) {
    throw std::runtime_error(std::string("madvise(MADV_DONTNEED): ") + std::strerror(errno));
  }
  return static_cast<int64_t>(end - begin);
}

void CpuDevice::gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                     int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  gemm_->sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void CpuDevice::add(float* y, const float* x, int n) { cblas_saxpy(n, 1.0f, x, 1, y, 1); }

void CpuDevice::column_sum(const float* a, int rows, int cols, float* out) {
  // Row after row, so A is streamed once in memory order and the inner loop vectorises.
  for (int c = 0; c < cols; ++c) out[c] = 0.0f;
  for (int r = 0; r < rows; ++r) {
    const float* row = a + static_cast<int64_t>(r) * cols;
    for (int c = 0; c < cols; ++c) out[c] += row[c];
  }
}

void CpuDevice::bias_act(float* y, const float* bias, int rows, int cols, bool relu) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + static_cast<int64_t>(r) * cols;
    if (relu) {
      for (int c = 0; c < cols; ++c) row[c] = ew::bias_relu(row[c], bias[c]);
    } else {
      for (int c = 0; c < cols; ++c) row[c] = ew::bias_only(row[c], bias[c]);
    }
  }
}

void CpuDevice::relu_backward(float* dx, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = ew::relu_grad(dx[i], y[i]);
}

void CpuDevice::softmax_xent(const float* z, const int32_t* labels, int rows, int cols,
                             float grad_scale, float* dz, float* loss_mean, float* loss_scaled,
                             float scaled_factor) {
  double sum = 0.0;
  for (int r = 0; r < rows; ++r) {
    const int64_t off = static_cast<int64_t>(r) * cols;
    sum += ew::softmax_xent_row(z + off, labels[r], cols, grad_scale, dz + off);
  }
  *loss_mean = static_cast<float>(sum / rows);
  *loss_scaled = static_cast<float>(sum * scaled_factor);
}

int64_t CpuDevice::count_correct(const float* z, const int32_t* labels, int rows, int cols) {
  int64_t correct = 0;
  for (int r = 0; r < rows; ++r) {
    correct += ew::argmax_row(z + static_cast<int64_t>(r) * cols, cols) == labels[r];
  }
  return correct;
}

namespace {

// 1 when v is non-finite: ew::finite_bits' test as an integer mask, a compare and an OR per
// element that vectorise with the baseline x86-64 SSE2 (pcmpeqd, por). An unsigned max needs
// SSE4.1 and a per-element boolean OR stayed scalar (2-3x the time of the SGD pass).
inline uint32_t nonfinite_bit(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
}

// The optimizer pass, one loop per case so each vectorises without a branch inside: with
// momentum or without, with the finite check folded in or without. Returns 1 when the check
// saw a non-finite updated weight — which is also how it sees a non-finite gradient (device.h).
template <bool kMomentum, bool kCheck>
uint32_t sgd_pass(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float weight_decay) {
  uint32_t any = 0;
  float unused = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float wi = ew::sgd_update(w[i], gi, kMomentum ? &v[i] : &unused, lr, kMomentum ? momentum : 0.0f,
                                    weight_decay);
    w[i] = wi;
    if constexpr (kCheck) any |= nonfinite_bit(wi);
  }
  return any;
}

}  // namespace

void CpuDevice::sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float weight_decay,
                    float* nonfinite_flag) {
  const bool mom = momentum > 0.0f;
  uint32_t any = 0;
  if (nonfinite_flag) {
    any = mom ? sgd_pass<true, true>(w, g, v, n, lr, momentum, weight_decay)
              : sgd_pass<false, true>(w, g, v, n, lr, momentum, weight_decay);
  } else if (mom) {
    sgd_pass<true, false>(w, g, v, n, lr, momentum, weight_decay);
  } else {
    sgd_pass<false, false>(w, g, v, n, lr, momentum, weight_decay);
  }
  if (any) *nonfinite_flag = 1.0f;
}

void CpuDevice::flag_nonfinite(const float* x, int64_t n, float* flag) {
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) any |= nonfinite_bit(x[i]);
  if (any) *flag = 1.0f;
}

uint64_t CpuDevice::memory_bytes() const { return physical_memory_bytes(); }

}  // namespace dpscale
