// cuda_upload_lane.cu — host-to-device uploads on a copy stream, from pinned host memory.
//
// Order, all on the device: the copy stream waits for an event recorded on the compute stream
// when the upload is queued (compute queued earlier may still read the destination), copies,
// and records `copied_`; end_batch() makes the compute stream wait for `copied_`. The host
// waits only in wait_read(), before the loader refills the host memory an upload reads — by
// then the step that used the batch has read its losses back, so that wait is normally over at once.
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "cuda_upload_lane.h"

namespace dpscale {

namespace {

class CudaUploadLane final : public UploadLane {
 public:
  explicit CudaUploadLane(cudaStream_t compute) : compute_(compute) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&compute_mark_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
  }
  // Unchecked: a destructor must not throw. Queued copies finish before the stream goes.
  ~CudaUploadLane() override {
    cudaStreamSynchronize(copy_);
    cudaEventDestroy(copied_);
    cudaEventDestroy(compute_mark_);
    cudaStreamDestroy(copy_);
  }

  void* alloc_host(size_t nbytes) override {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, nbytes == 0 ? 1 : nbytes, cudaHostAllocPortable));
    return p;
  }
  void free_host(void* p) noexcept override { cudaFreeHost(p); }

  void upload(void* dst, const void* host_src, size_t nbytes) override {
    CUDA_CHECK(cudaEventRecord(compute_mark_, compute_));
    CUDA_CHECK(cudaStreamWaitEvent(copy_, compute_mark_, 0));
    CUDA_CHECK(cudaMemcpyAsync(dst, host_src, nbytes, cudaMemcpyHostToDevice, copy_));
    queued_ = true;
  }
  void end_batch() override {
    if (!queued_) return;
    CUDA_CHECK(cudaEventRecord(copied_, copy_));
    CUDA_CHECK(cudaStreamWaitEvent(compute_, copied_, 0));
  }
  void wait_read() override {
    if (!queued_) return;
    CUDA_CHECK(cudaStreamSynchronize(copy_));
    queued_ = false;
  }

 private:
  cudaStream_t compute_;
  cudaStream_t copy_ = nullptr;
  cudaEvent_t compute_mark_ = nullptr, copied_ = nullptr;
  bool queued_ = false;  // uploads queued since the last wait_read()
};

}  // namespace

std::unique_ptr<UploadLane> make_cuda_upload_lane(void* compute) {
  return std::make_unique<CudaUploadLane>(static_cast<cudaStream_t>(compute));
}

}  // namespace dpscale
