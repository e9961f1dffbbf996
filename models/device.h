// device.h — the one interface both backends implement: memory, GEMM, the element-wise ops.
//
// The model library talks only to Device. CpuDevice (models/cpu) runs a GEMM library (OpenBLAS,
// BLIS or oneDNN: models/gemm) and loops over the functions in elementwise.h; CudaDevice (models/cuda) runs cuBLAS and launches kernels
// that call the same functions. All pointers passed to a Device are its own memory (from
// alloc_bytes); on the CPU backend that memory is ordinary host memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adamw.h"
#include "gemm/gemm_library.h"
#include "gemm/step_gemms.h"
#include "interval_timer.h"
#include "stamp_clock.h"
#include "upload_lane.h"

namespace dpscale {

enum class Backend { cpu, cuda };
const char* backend_name(Backend b);

class Device {
 public:
  virtual ~Device() = default;

  virtual Backend backend() const = 0;
  virtual std::string name() const = 0;  // e.g. "NVIDIA A100 80GB PCIe" or the CPU model
  // True when device memory is host memory (CPU backend): host data can be used in place.
  virtual bool host_visible() const = 0;
  // The compute stream as an opaque handle (cudaStream_t on CUDA, nullptr on CPU).
  virtual void* stream() const { return nullptr; }

  // --- memory ---
  virtual void* alloc_bytes(size_t nbytes) = 0;
  virtual void free_bytes(void* p) noexcept = 0;
  virtual void upload(void* dst, const void* host_src, size_t nbytes) = 0;
  virtual void download(void* host_dst, const void* src, size_t nbytes) = 0;  // waits for work
  virtual void copy(void* dst, const void* src, size_t nbytes) = 0;
  virtual void fill(float* x, float value, int64_t n) = 0;
  // Blocks the host until all work queued on this device has finished.
  virtual void synchronize() = 0;
  // A timer of intervals on the compute stream (interval_timer.h). The default is the host clock,
  // right for a synchronous device; the CUDA backend uses events.
  virtual std::unique_ptr<IntervalTimer> make_interval_timer() { return std::make_unique<HostIntervalTimer>(); }
  // Marks on the compute stream read back on the host's steady clock (stamp_clock.h): the
  // trace's clock. The default, the host clock, is right for a synchronous device.
  virtual std::unique_ptr<StampClock> make_stamp_clock() { return std::make_unique<HostStampClock>(); }

  // --- linear algebra ---
  // Row-major GEMM: C[m,n] = alpha · op(A)[m,k] · op(B)[k,n] + beta · C, op = transpose or not.
  // lda/ldb/ldc are row strides of the stored (untransposed) matrices.
  virtual void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                    int lda, const float* b, int ldb, float beta, float* c, int ldc) = 0;
  // out[cols] = Σ_rows A[rows, cols] (the bias gradient), overwriting out.
  virtual void column_sum(const float* a, int rows, int cols, float* out) = 0;
  // y[0, n) += x[0, n) (BLAS saxpy, α = 1): one rounding of x + y per element, exact in every
  // math mode (a 1×n×1 GEMM would round x to TF32 first under --tf32).
  virtual void add(float* y, const float* x, int n) = 0;

  // One layer's forward: y[rows, n_out] = act(x[rows, n_in] · w[n_out, n_in]ᵀ + bias), act = ReLU
  // or identity (mlp.cpp's layout). The default is gemm() then bias_act(): the GEMM writes y and a
  // second pass reads and writes it again. CUDA adds the bias and applies the ReLU in the GEMM's
  // own epilogue (cuBLASLt), no second pass, where cuBLASLt has a kernel for the call.
  virtual void linear_forward(const float* x, const float* w, const float* bias, float* y, int rows, int n_in,
                              int n_out, bool relu) {
    gemm(false, true, rows, n_out, n_in, 1.0f, x, n_in, w, n_in, 0.0f, y, n_out);
    bias_act(y, bias, rows, n_out, relu);
  }
  // Whether linear_forward() runs the bias and the ReLU inside the GEMM (bench_step's parts count
  // them with the GEMMs then, not with the element-wise passes).
  virtual bool fuses_bias_act() const { return false; }
  // How the forwards so far added the bias and the ReLU, as the record names it
  // (forward_epilogue): "pass" (a pass after each GEMM), "cublaslt" (every one inside its GEMM),
  // "cublaslt+pass" (some inside, some — calls cuBLASLt had no kernel for — in a pass).
  virtual std::string forward_epilogue() const { return "pass"; }

  // --- element-wise (elementwise.h) ---
  // y[r, c] = act(y[r, c] + bias[c]) with act = ReLU or identity; one pass.
  virtual void bias_act(float* y, const float* bias, int rows, int cols, bool relu) = 0;
  // dx[i] = relu_grad(dx[i], y[i]) in place.
  virtual void relu_backward(float* dx, const float* y, int64_t n) = 0;
  // Per row: dz = (softmax(z) - onehot(label)) · grad_scale. With S = Σ_rows loss_row,
  // writes *loss_mean = S / rows and *loss_scaled = S · scaled_factor (both device scalars).
  virtual void softmax_xent(const float* z, const int32_t* labels, int rows, int cols,
                            float grad_scale, float* dz, float* loss_mean, float* loss_scaled,
                            float scaled_factor) = 0;
  // Number of rows whose argmax equals the label (waits for the result).
  virtual int64_t count_correct(const float* z, const int32_t* labels, int rows, int cols) = 0;
  // The optimizer pass: w = sgd_update(w, g, v, ...) element-wise over n elements, momentum and
  // update in one pass; v may be null if momentum == 0. With a non-null `nonfinite_flag` (a
  // device scalar) the same pass is the finite check: it sets *nonfinite_flag to 1 when any
  // g[i] or any updated w[i] is non-finite (finite_check.h) and leaves it untouched otherwise.
  // The pass reads every gradient and writes every weight anyway, so the check adds no pass;
  // testing the updated weight alone covers the gradient too: a non-finite g[i] makes w[i]
  // non-finite whatever lr, momentum and weight decay are (IEEE: inf·0 and NaN·x are NaN,
  // inf ± a finite value is inf), as does a non-finite w[i] or v[i] going in, or an overflow.
  virtual void sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum,
                   float weight_decay, float* nonfinite_flag) = 0;

  // AdamW (adamw.h) over n elements: w, its gradient g and its two fp32 moments m and v, one
  // pass; with a non-null `nonfinite_flag` the finite check folded in as in sgd(). Any
  // sub-range of the flat buffers (a rank's shard) is as good as the whole: element-wise.
  virtual void adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s,
                     float* nonfinite_flag) = 0;

  // --- reliability (finite_check.h) ---
  // Sets *flag (a device scalar) to 1 when any of x[0, n) is non-finite; leaves it untouched
  // otherwise, so several buffers can report into one flag. Queued like any op: no host wait.
  // A pass of its own: for steps without an update (warm-up); training folds it into sgd().
  virtual void flag_nonfinite(const float* x, int64_t n, float* flag) = 0;
  // The most bytes alloc_bytes() had out at once (CUDA: counted at its cudaMalloc calls); 0 where
  // not counted (the CPU backend).
  virtual uint64_t peak_allocated_bytes() const { return 0; }
  // Hands the memory behind the whole pages inside [p, p + count) back to the system, while the
  // allocation stays valid: what a ZeRO stage-3 strategy does with a unit's parameters or
  // gradients it is done with (the next touch of those pages finds zeros). Returns the bytes
  // released; a backend that cannot releases none (the caller must not rely on the contents
  // either way). Host-synchronous: the device must be done with the range.
  virtual int64_t release_pages(float* p, int64_t count) {
    (void)p;
    (void)count;
    return 0;
  }
  // The page size release_pages() works in (bytes); 0 where it releases nothing.
  virtual int64_t page_bytes() const { return 0; }
  // Bytes of memory this device has in all (CPU: physical memory; CUDA: the GPU's); 0 if unknown.
  virtual uint64_t memory_bytes() const = 0;

  // The GEMMs' math mode as the record names it (cublas_math): "none" where no cuBLAS runs.
  virtual std::string gemm_math() const { return "none"; }
  // The GEMM library, its kernels and how it was chosen (the record's gemm_* fields); an empty
  // library where none of models/gemm runs (CUDA).
  virtual GemmReport gemm_report() const { return {}; }
  // Host-to-device copies off the compute stream, from pinned host memory (upload_lane.h); null
  // where device memory is host memory and nothing is uploaded.
  virtual std::unique_ptr<UploadLane> make_upload_lane() { return nullptr; }
};

// Owning typed buffer in a device's memory. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device& dev, size_t count)
      : dev_(&dev), ptr_(static_cast<T*>(dev.alloc_bytes(count * sizeof(T)))), count_(count) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_) dev_->free_bytes(ptr_);
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t nbytes() const { return count_ * sizeof(T); }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(dev_, o.dev_);
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
  }
  Device* dev_ = nullptr;
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

struct DeviceOptions {
  std::string backend = "auto";  // auto | cpu | cuda
  int threads = 1;               // GEMM library threads per process (CPU backend)
  bool tf32 = false;             // allow TF32 tensor-core GEMMs (CUDA backend)
  int gpu_index = 0;             // which GPU (the node-local rank)
  // cuBLAS math mode (CUDA backend): "" follows tf32 (tf32 or pedantic); else one of
  // cublas_math_names(). Only the benchmarks choose it: the trainers run pedantic or --tf32.
  std::string cublas_math = "";
  // The CPU backend's GEMM library: auto | openblas | blis | onednn (models/gemm/gemm_library.h).
  // auto measures on `gemm_shapes` (the model's step at the local batch: step_gemms.h); with none
  // given, on the machine probe's square GEMM.
  std::string gemm = "auto";
  std::vector<GemmShape> gemm_shapes = {};
};

// The cuBLAS math modes of fp32 GEMMs, as the record and bench_gemm --cublas-math name them:
//   pedantic  CUBLAS_PEDANTIC_MATH: the prescribed fp32 arithmetic in every phase, no
//             reduced-precision shortcut (the trainers' default: GPU weights comparable to the CPU's)
//   default   CUBLAS_DEFAULT_MATH: fp32 in, fp32 compute, cuBLAS free to pick its fastest kernels
//             (what PyTorch's fp32 matmul runs with TF32 off)
//   tf32      CUBLAS_TF32_TENSOR_OP_MATH: tensor cores, inputs rounded to TF32 (--tf32)
const char* const* cublas_math_names();  // null-terminated: pedantic, default, tf32
// The mode `opts` asks for; InputError naming the choices for an unknown word.
std::string cublas_math_of(const DeviceOptions& opts);

// Builds the requested backend. "auto" picks CUDA when it was compiled in and a device answers,
// else CPU, whose GEMM library is opts.gemm (auto: gemm/gemm_choice.h). Throws InputError for an
// unknown backend or library, "cuda" with no usable GPU, or a library this build lacks.
std::unique_ptr<Device> make_device(const DeviceOptions& opts);
// The CPU backend alone, whatever opts.backend says.
std::unique_ptr<Device> make_cpu_device(const DeviceOptions& opts);

// Whether the CUDA backend was compiled into this binary, and how many GPUs answer (0 if none).
bool cuda_compiled();
int cuda_device_count();
// GPU `index`'s fp32 peak in GFLOP/s (cuda/cuda_device.h); 0 without the CUDA backend.
double gpu_fp32_peak_gflops(int index);

}  // namespace dpscale
