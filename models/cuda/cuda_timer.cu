// cuda_timer.cu — IntervalTimer on a CUDA stream: an event pair per interval, no host wait.
//
// start() and stop() only record events on the compute stream. The elapsed time of a closed
// pair is read when its stop event has completed: at the next start() if it already has (the
// trainers read the loss once per step, which has drained the stream by then), else at
// take_seconds(), which waits. So the pool holds a couple of pairs, reused every step.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "cuda_timer.h"

namespace dpscale {

namespace {

class CudaIntervalTimer final : public IntervalTimer {
 public:
  explicit CudaIntervalTimer(cudaStream_t stream) : stream_(stream) {}
  ~CudaIntervalTimer() override {
    for (const Pair& p : pool_) {
      cudaEventDestroy(p.start);
      cudaEventDestroy(p.stop);
    }
  }

  void start() override {
    harvest(false);
    if (open_ == pool_.size()) {
      Pair p{};
      CUDA_CHECK(cudaEventCreate(&p.start));
      CUDA_CHECK(cudaEventCreate(&p.stop));
      pool_.push_back(p);
    }
    CUDA_CHECK(cudaEventRecord(pool_[open_].start, stream_));
  }

  void stop() override {
    CUDA_CHECK(cudaEventRecord(pool_[open_].stop, stream_));
    ++open_;
  }

  double take_seconds() override {
    harvest(true);
    const double s = sum_;
    sum_ = 0.0;
    return s;
  }

 private:
  struct Pair {
    cudaEvent_t start, stop;
  };

  // Adds the closed pairs [0, open_) that have completed (all of them when `wait`), keeping the
  // pairs not yet complete at the front of the pool for later.
  void harvest(bool wait) {
    size_t done = 0;
    while (done < open_) {
      const Pair& p = pool_[done];
      if (wait) {
        CUDA_CHECK(cudaEventSynchronize(p.stop));
      } else {
        const cudaError_t q = cudaEventQuery(p.stop);
        if (q == cudaErrorNotReady) break;
        CUDA_CHECK(q);
      }
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, p.start, p.stop));
      sum_ += ms * 1e-3;
      ++done;
    }
    // Recycle the harvested pairs: move them behind the pending ones.
    std::rotate(pool_.begin(), pool_.begin() + static_cast<std::ptrdiff_t>(done),
                pool_.begin() + static_cast<std::ptrdiff_t>(open_));
    open_ -= done;
  }

  cudaStream_t stream_;
  std::vector<Pair> pool_;
  size_t open_ = 0;  // pairs [0, open_) are closed and not yet read
  double sum_ = 0.0;
};

}  // namespace

std::unique_ptr<IntervalTimer> make_cuda_interval_timer(void* stream) {
  return std::make_unique<CudaIntervalTimer>(static_cast<cudaStream_t>(stream));
}

}  // namespace dpscale
