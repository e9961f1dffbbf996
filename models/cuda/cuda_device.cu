// cuda_device.cu — the CUDA backend: cuBLAS GEMMs on a dedicated compute stream, kernels from
// kernels.cu, every CUDA and cuBLAS call checked.
//
// Row-major GEMM on column-major cuBLAS: a row-major matrix M[r,c] is, byte for byte, the
// column-major matrix Mᵀ[c,r]. So the row-major product C = op(A)·op(B) is computed as the
// column-major product Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands (B first), swap m and n, and keep
// each operand's own transpose flag. Leading dimensions stay the row strides.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "core/errors.h"
#include "cuda_check.h"
#include "adamw_kernel.h"
#include "cuda_device.h"
#include "cuda_lt_linear.h"
#include "cuda_stamp_clock.h"
#include "cuda_timer.h"
#include "cuda_upload_lane.h"
#include "kernels.cuh"

namespace dpscale {

namespace {

class CudaDevice final : public Device {
 public:
  CudaDevice(int index, const std::string& math) : index_(index), math_(math) {
    CUDA_CHECK(cudaSetDevice(index));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
    name_ = prop.name;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&blas_));
    CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    // Exact fp32 unless asked: TF32 would make GPU results differ from the CPU reference.
    CUBLAS_CHECK(cublasSetMathMode(blas_, math == "tf32"      ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : math == "default" ? CUBLAS_DEFAULT_MATH
                                                              : CUBLAS_PEDANTIC_MATH));
    CUDA_CHECK(cudaMalloc(&count_, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMallocHost(&bounce_, kBounceBytes));
    lt_linear_ = make_lt_linear(stream_, math);
  }
  ~CudaDevice() override {
    // Destructors must not throw: release quietly, in reverse order.
    lt_linear_.reset();
    cudaFreeHost(bounce_);
    cudaFree(count_);
    cudaFree(ones_);
    cudaFree(row_loss_);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
  }

  Backend backend() const override { return Backend::cuda; }
  std::string name() const override { return name_; }
  bool host_visible() const override { return false; }
  void* stream() const override { return stream_; }

  // Every allocation's size is kept, so the record's peak is what this device really had out
  // (peak_allocated_bytes), not a formula.
  void* alloc_bytes(size_t nbytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, nbytes == 0 ? 1 : nbytes));
    sizes_[p] = nbytes;
    live_ += nbytes;
    peak_ = std::max(peak_, live_);
    return p;
  }
  void free_bytes(void* p) noexcept override {
    const auto it = sizes_.find(p);
    if (it != sizes_.end()) {
      live_ -= it->second;
      sizes_.erase(it);
    }
    cudaFree(p);
  }
  uint64_t peak_allocated_bytes() const override { return peak_; }
  void upload(void* dst, const void* src, size_t n) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host buffer may go away after return
  }
  // A small read (a step's losses and finite flag, an accuracy count) goes through a pinned
  // buffer: a copy from pageable memory is staged by the driver and returns later than the
  // stream, and this read is the one host wait of every training step.
  void download(void* dst, const void* src, size_t n) override {
    void* via = n <= kBounceBytes ? bounce_ : dst;
    CUDA_CHECK(cudaMemcpyAsync(via, src, n, cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (via != dst) std::memcpy(dst, via, n);
  }
  void copy(void* dst, const void* src, size_t n) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream_));
  }
  void fill(float* x, float value, int64_t n) override { cuda::fill(x, value, n, stream_); }
  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::unique_ptr<IntervalTimer> make_interval_timer() override { return make_cuda_interval_timer(stream_); }
  std::unique_ptr<StampClock> make_stamp_clock() override { return make_cuda_stamp_clock(stream_); }

  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override {
    CUBLAS_CHECK(cublasSgemm(blas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                             n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc));
  }
  // The bias and the ReLU in the GEMM's epilogue (cuda_lt_linear.h); the GEMM and a bias pass
  // where cuBLASLt has no kernel for the call.
  void linear_forward(const float* x, const float* w, const float* bias, float* y, int rows, int n_in, int n_out,
                      bool relu) override {
    if (lt_linear_->run(x, w, bias, y, rows, n_in, n_out, relu)) {
      ++fused_forwards_;
      return;
    }
    ++pass_forwards_;
    Device::linear_forward(x, w, bias, y, rows, n_in, n_out, relu);
  }
  bool fuses_bias_act() const override { return true; }
  std::string forward_epilogue() const override {
    if (fused_forwards_ == 0) return "pass";
    return pass_forwards_ == 0 ? "cublaslt" : "cublaslt+pass";
  }
  void column_sum(const float* a, int rows, int cols, float* out) override {
    // Row-major A[rows, cols] is column-major Aᵀ[cols, rows]: out = Aᵀ · ones(rows).
    ensure_ones(rows);
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemv(blas_, CUBLAS_OP_N, cols, rows, &one, a, cols, ones_, 1, &zero, out, 1));
  }
  void add(float* y, const float* x, int n) override {
    const float one = 1.0f;
    CUBLAS_CHECK(cublasSaxpy(blas_, n, &one, x, 1, y, 1));
  }
  void bias_act(float* y, const float* bias, int rows, int cols, bool relu) override {
    cuda::bias_act(y, bias, rows, cols, relu, stream_);
  }
  void relu_backward(float* dx, const float* y, int64_t n) override { cuda::relu_backward(dx, y, n, stream_); }
  void softmax_xent(const float* z, const int32_t* labels, int rows, int cols, float grad_scale,
                    float* dz, float* loss_mean, float* loss_scaled, float scaled_factor) override {
    if (rows > row_loss_cap_) {
      CUDA_CHECK(cudaFree(row_loss_));
      row_loss_ = nullptr;
      CUDA_CHECK(cudaMalloc(&row_loss_, sizeof(float) * rows));
      row_loss_cap_ = rows;
    }
    cuda::softmax_xent(z, labels, rows, cols, grad_scale, dz, row_loss_, loss_mean, loss_scaled,
                       scaled_factor, stream_);
  }
  int64_t count_correct(const float* z, const int32_t* labels, int rows, int cols) override {
    CUDA_CHECK(cudaMemsetAsync(count_, 0, sizeof(unsigned long long), stream_));
    cuda::count_correct(z, labels, rows, cols, count_, stream_);
    unsigned long long host = 0;
    download(&host, count_, sizeof host);
    return static_cast<int64_t>(host);
  }
  void sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float weight_decay,
           float* nonfinite_flag) override {
    cuda::sgd(w, g, v, n, lr, momentum, weight_decay, nonfinite_flag, stream_);
  }
  void adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s,
             float* nonfinite_flag) override {
    cuda::adamw(w, g, m, v, n, s, nonfinite_flag, stream_);
  }
  void flag_nonfinite(const float* x, int64_t n, float* flag) override { cuda::flag_nonfinite(x, n, flag, stream_); }
  std::string gemm_math() const override { return math_; }
  std::unique_ptr<UploadLane> make_upload_lane() override { return make_cuda_upload_lane(stream_); }
  uint64_t memory_bytes() const override {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return total_b;
  }

 private:
  void ensure_ones(int rows) {
    if (rows <= ones_cap_) return;
    CUDA_CHECK(cudaFree(ones_));
    ones_ = nullptr;
    CUDA_CHECK(cudaMalloc(&ones_, sizeof(float) * rows));
    cuda::fill(ones_, 1.0f, rows, stream_);
    ones_cap_ = rows;
  }

  int index_;
  std::string math_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::unordered_map<void*, size_t> sizes_;  // alloc_bytes' live allocations
  uint64_t live_ = 0, peak_ = 0;
  float* ones_ = nullptr;
  int ones_cap_ = 0;
  float* row_loss_ = nullptr;
  int row_loss_cap_ = 0;
  unsigned long long* count_ = nullptr;
  static constexpr size_t kBounceBytes = 256;
  void* bounce_ = nullptr;  // pinned host memory for small downloads
  std::unique_ptr<LtLinear> lt_linear_;
  int64_t fused_forwards_ = 0, pass_forwards_ = 0;  // linear_forward calls each way
};

}  // namespace

int cuda_visible_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" / "no device" error
    return 0;
  }
  return n;
}

std::vector<GpuUuid> cuda_visible_uuids() {
  std::vector<GpuUuid> out;
  const int n = cuda_visible_devices();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    GpuUuid u{};
    std::memcpy(u.data(), prop.uuid.bytes, u.size());
    out.push_back(u);
  }
  return out;
}

double cuda_fp32_peak_gflops(int index) {
  int sms = 0, clock_khz = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index));
  // fp32 lanes per SM, from NVIDIA's architecture whitepapers: Volta/Turing/A100 (7.x, 8.0) 64;
  // GA10x, Ada, Hopper, Blackwell (8.6+, 9.x, 10.x, 12.x) 128. A100: 108·64·2·1.41 GHz = 19.5 TFLOP/s.
  int lanes = 0;
  if (major == 7 || (major == 8 && minor == 0)) lanes = 64;
  else if (major >= 8) lanes = 128;
  return static_cast<double>(sms) * lanes * 2.0 * clock_khz * 1e3 / 1e9;
}

std::unique_ptr<Device> make_cuda_device(int index, const std::string& math) {
  return std::make_unique<CudaDevice>(index, math);
}

}  // namespace dpscale
