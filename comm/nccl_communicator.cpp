// nccl_communicator.cpp — NCCL all-reduce on a comm stream, ordered after compute by events.
#include "nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "inflight.h"
#include "models/cuda/cuda_check.h"
#include "mpi_check.h"
#include "watchdog.h"

#define NCCL_CHECK(call)                                                                     \
  do {                                                                                       \
    ncclResult_t r_ = (call);                                                                \
    if (r_ != ncclSuccess) ::dpscale::cuda_fail(#call, ncclGetErrorString(r_), __FILE__, __LINE__); \
  } while (0)

namespace dpscale {

namespace {

class NcclCommunicator;

class NcclWork final : public Work {
 public:
  NcclWork(NcclCommunicator& c, uint64_t seq, cudaEvent_t done) : c_(c), seq_(seq), done_(done) {}
  void wait() override;

 private:
  NcclCommunicator& c_;
  uint64_t seq_;  // this all-reduce's own number: what the watchdog names, not the latest launch
  cudaEvent_t done_;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Device& dev, MPI_Comm world, CollectiveWatchdog* watchdog)
      : watchdog_(watchdog), compute_(static_cast<cudaStream_t>(dev.stream())) {
    MPI_CHECK(MPI_Comm_rank(world, &rank_));
    MPI_CHECK(MPI_Comm_size(world, &size_));
    ncclUniqueId id;
    if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world));
    NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming));
  }
  // Unchecked calls: a destructor must not throw. Unwinding from an error (a failed peer, a
  // timeout already handled), the peers may never finish this rank's collectives, and a
  // synchronise + ncclCommDestroy would block on them until the watchdog ends the job; abort
  // instead, which returns at once. On a normal exit everything has drained.
  ~NcclCommunicator() override {
    if (comm_) {
      if (std::uncaught_exceptions() > 0) {
        ncclCommAbort(comm_);
      } else {
        cudaStreamSynchronize(stream_);
        ncclCommDestroy(comm_);
      }
    }
    for (auto& e : events_) {
      cudaEventDestroy(e.ready);
      cudaEventDestroy(e.start);
      cudaEventDestroy(e.end);
    }
    cudaEventDestroy(comm_done_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }

  std::unique_ptr<Work> allreduce_sum(float* data, size_t count) override {
    Events& ev = next_events();
    ev.seq = ++launched_;
    ev.data = data;
    ev.count = count;
    // The gradient was queued on the compute stream; the comm stream starts after it, not
    // after everything the compute stream will do later.
    CUDA_CHECK(cudaEventRecord(ev.ready, compute_));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, ev.ready, 0));
    CUDA_CHECK(cudaEventRecord(ev.start, stream_));
    NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, stream_));
    CUDA_CHECK(cudaEventRecord(ev.end, stream_));
    return std::make_unique<NcclWork>(*this, ev.seq, ev.end);
  }

  // Device-side only: later compute (the SGD step) waits for the reduced gradients on the GPU;
  // the host goes on, so a timer on the compute stream sees no host synchronisation.
  void finish() override {
    CUDA_CHECK(cudaEventRecord(comm_done_, stream_));
    CUDA_CHECK(cudaStreamWaitEvent(compute_, comm_done_, 0));
  }

  // The host waits for this step's all-reduces (polling NCCL's asynchronous errors, so a dead
  // peer ends the run instead of hanging it), adds their durations to the busy time and recycles
  // their events: the pool holds one step's worth.
  void drain() override {
    CUDA_CHECK(cudaEventRecord(comm_done_, stream_));
    wait_event(comm_done_, launched_);
    completed_ = launched_;
    recycle();
  }

  // A Work's wait: for all-reduce #seq only, named as such if it times out.
  void wait_work(uint64_t seq, cudaEvent_t end) {
    if (seq <= completed_) return;  // done, and its events may already serve a later launch
    wait_event(end, seq);
    completed_ = std::max(completed_, seq);
  }

  double take_busy_seconds() override {
    drain();
    const double s = busy_s_;
    busy_s_ = 0.0;
    return s;
  }

  // Host waits for an event (marking all-reduce `last_seq` or earlier), checking NCCL's
  // asynchronous errors so a dead peer ends the run. Polled with the watchdog's backoff, not a
  // spin (watchdog.h); past --collective-timeout the first unfinished all-reduce of the step is
  // named, the NCCL communicator aborted (ncclCommAbort) and the job ended (MPI_Abort).
  void wait_event(cudaEvent_t e, uint64_t last_seq) {
    WaitScope scope(WaitContext{watchdog_, Channel::gradients, first_unfinished(last_seq),
                                [this, last_seq] { return describe_unfinished(last_seq); },
                                [this] {
                                  if (comm_) ncclCommAbort(comm_);
                                  comm_ = nullptr;
                                },
                                false});
    poll_until([&] {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaSuccess) return true;
      if (q != cudaErrorNotReady) CUDA_CHECK(q);
      ncclResult_t async = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
      if (async != ncclSuccess) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        cuda_fail("ncclCommGetAsyncError", ncclGetErrorString(async), __FILE__, __LINE__);
      }
      return false;
    });
  }

  // The sequence number of the all-reduce a wait for #last_seq is held up by (inflight.h: the
  // first not done of #last_seq and those before it, as far as the peers' heartbeats are
  // concerned); last_seq when all of them are done.
  uint64_t first_unfinished(uint64_t last_seq) const {
    const auto i = holding_up(in_flight(), last_seq);
    return i ? events_[*i].seq : last_seq;
  }
  std::string describe_unfinished(uint64_t last_seq) const {
    const auto i = holding_up(in_flight(), last_seq);
    if (i) return describe_allreduce(events_[*i].seq, events_[*i].data, events_[*i].count);
    return "all-reduce #" + std::to_string(last_seq);
  }

 private:
  std::vector<InFlight> in_flight() const {
    std::vector<InFlight> v;
    for (size_t i = 0; i < used_; ++i) v.push_back({events_[i].seq, cudaEventQuery(events_[i].end) != cudaErrorNotReady});
    return v;
  }

  // Every launched all-reduce is done: add their durations to the busy time, free their events.
  void recycle() {
    for (size_t i = 0; i < used_; ++i) {
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i].start, events_[i].end));
      busy_s_ += ms * 1e-3;
    }
    used_ = 0;
  }

  struct Events {
    cudaEvent_t ready, start, end;
    uint64_t seq = 0;  // which all-reduce used them last, for the watchdog's message
    const float* data = nullptr;
    size_t count = 0;
  };
  // A caller that waits on each all-reduce's Work and never drains (blocking all-reduces) gets
  // the pool back once everything launched is known done, instead of a new set per call.
  Events& next_events() {
    if (used_ > 0 && completed_ == launched_) recycle();
    if (used_ == events_.size()) {
      Events e{};
      CUDA_CHECK(cudaEventCreateWithFlags(&e.ready, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreate(&e.start));
      CUDA_CHECK(cudaEventCreate(&e.end));
      events_.push_back(e);
    }
    return events_[used_++];
  }

  int rank_ = 0, size_ = 1;
  CollectiveWatchdog* watchdog_ = nullptr;
  uint64_t launched_ = 0;  // all-reduces launched: the gradients channel's sequence number
  uint64_t completed_ = 0;  // every all-reduce up to this one is known done
  ncclComm_t comm_ = nullptr;
  cudaStream_t compute_ = nullptr, stream_ = nullptr;
  cudaEvent_t comm_done_ = nullptr;
  std::vector<Events> events_;  // recycled by drain() every step: no per-step event creation
  size_t used_ = 0;
  double busy_s_ = 0.0;
};

void NcclWork::wait() { c_.wait_work(seq_, done_); }

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Device& device, MPI_Comm world, CollectiveWatchdog* watchdog) {
  if (device.backend() != Backend::cuda) throw std::logic_error("NCCL needs the CUDA backend");
  return std::make_unique<NcclCommunicator>(device, world, watchdog);
}

std::string nccl_version_string() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace dpscale
