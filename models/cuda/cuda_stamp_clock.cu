// cuda_stamp_clock.cu — stamps as CUDA events, converted to the host's steady clock through
// anchors.
//
// An anchor is an event recorded on an idle stream together with the host's time: it runs at
// once (within the few µs a record takes to reach the GPU: the error of the mapping). A stamp's time is its anchor's host
// time plus cudaEventElapsedTime(anchor, stamp). The elapsed time is a float of milliseconds,
// so the anchor is renewed per traced step (the trainers anchor at each step's start, after
// the previous step's loss read-back has drained the stream): the interval stays short and its
// float exact to well under a microsecond.
#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.h"
#include "cuda_stamp_clock.h"

namespace dpscale {

namespace {

class CudaStampClock final : public StampClock {
 public:
  explicit CudaStampClock(cudaStream_t stream) : stream_(stream) {}
  ~CudaStampClock() override {
    for (const Anchor& a : anchors_) cudaEventDestroy(a.event);
    for (const Stamp& s : stamps_) cudaEventDestroy(s.event);
  }

  // Waits for the stream first, so the anchor runs as it is recorded: at a step's start the
  // stream is already idle (the previous step's loss read-back drained it) and this costs nothing.
  void anchor() override {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    Anchor a{};
    CUDA_CHECK(cudaEventCreate(&a.event));
    CUDA_CHECK(cudaEventRecord(a.event, stream_));
    a.host_s = steady_seconds();
    anchors_.push_back(a);
  }

  int stamp() override {
    if (anchors_.empty()) anchor();
    Stamp s{};
    CUDA_CHECK(cudaEventCreate(&s.event));
    CUDA_CHECK(cudaEventRecord(s.event, stream_));
    s.anchor = anchors_.size() - 1;
    stamps_.push_back(s);
    return static_cast<int>(stamps_.size()) - 1;
  }

  double seconds(int id) override {
    const Stamp& s = stamps_.at(static_cast<size_t>(id));
    const Anchor& a = anchors_[s.anchor];
    CUDA_CHECK(cudaEventSynchronize(s.event));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a.event, s.event));
    return a.host_s + static_cast<double>(ms) * 1e-3;
  }

 private:
  struct Anchor {
    cudaEvent_t event;
    double host_s;
  };
  struct Stamp {
    cudaEvent_t event;
    size_t anchor;
  };
  cudaStream_t stream_;
  std::vector<Anchor> anchors_;
  std::vector<Stamp> stamps_;
};

}  // namespace

std::unique_ptr<StampClock> make_cuda_stamp_clock(void* stream) {
  return std::make_unique<CudaStampClock>(static_cast<cudaStream_t>(stream));
}

}  // namespace dpscale
