// cpu_device.h — the CPU backend: a GEMM library's sgemm (models/gemm: OpenBLAS, BLIS or oneDNN)
// plus loops over elementwise.h. One thread per process by default: each MPI rank stands for one
// device.
#pragma once

#include "../device.h"

namespace dpscale {

class CpuDevice final : public Device {
 public:
  // OpenBLAS, as requested.
  explicit CpuDevice(int threads);
  // `gemm` for the GEMMs; `choice` and `passed_over` as GemmReport says.
  CpuDevice(int threads, std::unique_ptr<GemmLibrary> gemm, std::string choice, std::string passed_over);

  Backend backend() const override { return Backend::cpu; }
  std::string name() const override { return name_; }
  bool host_visible() const override { return true; }

  void* alloc_bytes(size_t nbytes) override;
  void free_bytes(void* p) noexcept override;
  int64_t release_pages(float* p, int64_t count) override;
  int64_t page_bytes() const override;
  void upload(void* dst, const void* src, size_t nbytes) override;
  void download(void* dst, const void* src, size_t nbytes) override;
  void copy(void* dst, const void* src, size_t nbytes) override;
  void fill(float* x, float value, int64_t n) override;
  void synchronize() override {}

  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
            const float* b, int ldb, float beta, float* c, int ldc) override;
  void column_sum(const float* a, int rows, int cols, float* out) override;
  void add(float* y, const float* x, int n) override;
  void bias_act(float* y, const float* bias, int rows, int cols, bool relu) override;
  void relu_backward(float* dx, const float* y, int64_t n) override;
  void softmax_xent(const float* z, const int32_t* labels, int rows, int cols, float grad_scale,
                    float* dz, float* loss_mean, float* loss_scaled, float scaled_factor) override;
  int64_t count_correct(const float* z, const int32_t* labels, int rows, int cols) override;
  void sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float weight_decay,
           float* nonfinite_flag) override;
  void adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s,
             float* nonfinite_flag) override;  // cpu_adamw.cpp
  void flag_nonfinite(const float* x, int64_t n, float* flag) override;
  uint64_t memory_bytes() const override;
  GemmReport gemm_report() const override { return report_; }

 private:
  std::string name_;
  std::unique_ptr<GemmLibrary> gemm_;
  GemmReport report_;
};

// The CPU model name from /proc/cpuinfo ("unknown CPU" if unreadable).
std::string cpu_model_name();

}  // namespace dpscale
