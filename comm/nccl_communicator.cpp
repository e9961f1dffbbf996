// nccl_communicator.cpp — NCCL all-reduce on a comm stream, ordered after compute by events.
//
// --grad-comm bf16|fp16: each all-reduce packs its fp32 gradients into a 2-byte staging buffer
// on the comm stream (nccl_wire.cu), all-reduces that as ncclBfloat16 / ncclHalf and widens the
// sums back. Accumulation: NCCL adds in the wire type hop by hop — each partial sum is formed
// wider (fp32 for bf16, half arithmetic with one rounding for fp16) and rounded back to 2 bytes
// before it travels on, as the MPI path's 2-byte ring does; no fp32 accumulator survives between
// hops, so a sum over K ranks carries up to K−1 roundings of the wire format (ring; fewer on a
// tree). The loss slot alone is summed in fp32, in a one-element all-reduce of its own
// (communicator.h, set_grad_format).
#include "nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "inflight.h"
#include "models/cuda/cuda_check.h"
#include "models/stamp_clock.h"
#include "mpi_check.h"
#include "nccl_order_hook.h"
#include "nccl_wire.cuh"
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
  bool done() override {
    const cudaError_t e = cudaEventQuery(done_);
    if (e == cudaErrorNotReady) return false;
    CUDA_CHECK(e);
    return true;
  }

 private:
  NcclCommunicator& c_;
  uint64_t seq_;  // this all-reduce's own number: what the watchdog names, not the latest launch
  cudaEvent_t done_;
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Device& dev, MPI_Comm world, CollectiveWatchdog* watchdog)
      : watchdog_(watchdog), compute_(static_cast<cudaStream_t>(dev.stream())), hook_(NcclOrderHook::from_env()) {
    MPI_CHECK(MPI_Comm_rank(world, &rank_));
    MPI_CHECK(MPI_Comm_size(world, &size_));
    ncclUniqueId id;
    if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world));
    init_watched(id);
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&comm_done_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreate(&anchor_));
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
    if (wire_) cudaFreeAsync(wire_, stream_);
    cudaEventDestroy(anchor_);
    cudaEventDestroy(comm_done_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "nccl"; }
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }

  std::unique_ptr<Work> allreduce_sum(float* data, size_t count) override {
    Events& ev = next_events();
    launch(ev, data, count, nullptr);
    return std::make_unique<NcclWork>(*this, ev.seq, ev.end);
  }

  // In place (shard_collectives.h): rank r's block at data + r·block, NCCL's own in-place form
  // (recvbuff = sendbuff + rank·recvcount).
  std::unique_ptr<Work> reduce_scatter_sum(float* data, size_t count) override {
    return launch_shard(data, count, Collective::reduce_scatter);
  }
  std::unique_ptr<Work> allgather(float* data, size_t count) override {
    return launch_shard(data, count, Collective::allgather);
  }

  // One event on the compute stream and one stream wait for the whole batch, and one start
  // event: each later call starts where the one before it ended (nothing runs between them on
  // the comm stream). While the call log is on, each call's end event times it; while it is off
  // only the last call has one, timed from the batch's start: the busy time is the same sum
  // (the calls run back to back), and the calls before the last cost the comm stream nothing but
  // the NCCL call. Where NCCL has nothing to do (one rank: an in-place sum is no operation), an
  // end event per call is what naive's calls put on the stream, in series.
  void allreduce_sum_batch(const std::vector<Range>& calls) override {
    cudaEvent_t after = nullptr;
    for (size_t i = 0; i < calls.size(); ++i) {
      Events& ev = next_events();
      launch(ev, calls[i].data, calls[i].count, after, log_ || i + 1 == calls.size());
      after = ev.timed ? ev.end : ev.from;
    }
  }

  void set_grad_format(GradFormat fmt, const float* exact) override {
    fmt_ = fmt;
    exact_ = exact;
  }

  // Device-side only: later compute (the SGD step) waits for the reduced gradients on the GPU;
  // the host goes on, so a timer on the compute stream sees no host synchronisation.
  void finish() override {
    CUDA_CHECK(cudaEventRecord(comm_done_, stream_));
    if (hook_.no_finish_wait) return;  // the ordering tests' negative control only
    CUDA_CHECK(cudaStreamWaitEvent(compute_, comm_done_, 0));
  }

  // The call log (--trace's comm spans, the record's per-bucket busbw): each all-reduce's start
  // and end events, read when drain() has found them done, on the host's steady clock through
  // an anchor (stamp_clock.h) recorded on the comm stream whenever it is idle (after a drain).
  void log_calls(bool on) override {
    log_ = on;
    if (on) reanchor();
  }
  std::vector<CallTiming> take_call_log() override {
    std::vector<CallTiming> out;
    out.swap(log_calls_);
    return out;
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
    allgather_s_ = 0.0;
    return s;
  }
  double take_allgather_seconds() override {
    drain();
    const double s = allgather_s_;
    allgather_s_ = 0.0;
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
    if (!i) return "all-reduce #" + std::to_string(last_seq);
    std::string d = describe_allreduce(events_[*i].seq, events_[*i].data, events_[*i].count, events_[*i].op);
    // Every rank keeps the log on the same steps, so all of them name the same call.
    if (!events_[*i].timed) d += " or a later one of its batch (timed together on this step)";
    return d;
  }

 private:
  // A call without an end event of its own (a batch's, the log off) is known done when the next
  // timed call is (inflight.h).
  std::vector<InFlight> in_flight() const {
    std::vector<Queued> q;
    for (size_t i = 0; i < used_; ++i) {
      const Events& e = events_[i];
      q.push_back({e.seq, e.timed, e.timed && cudaEventQuery(e.end) != cudaErrorNotReady});
    }
    return in_flight_of(q);
  }

  // Every launched all-reduce is done: add their durations to the busy time (and log them),
  // free their events. The comm stream is idle now: a fresh anchor for the next calls.
  void recycle() {
    for (size_t i = 0; i < used_; ++i) {
      if (!events_[i].timed) continue;  // its time is in the next timed call's
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i].from, events_[i].end));
      busy_s_ += ms * 1e-3;
      if (events_[i].op == Collective::allgather) allgather_s_ += ms * 1e-3;
      if (log_) {
        float from_anchor = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&from_anchor, anchor_, events_[i].from));
        const double start = anchor_host_s_ + from_anchor * 1e-3;
        log_calls_.push_back(CallTiming{events_[i].data, events_[i].count, events_[i].queued_s, start, start + ms * 1e-3,
                                        0.0, events_[i].op});
      }
    }
    used_ = 0;
    if (log_) reanchor();
  }
  void reanchor() {
    CUDA_CHECK(cudaEventRecord(anchor_, stream_));
    anchor_host_s_ = steady_seconds();
  }

  // The 2-byte all-reduce (top of file), all on the comm stream: the staging buffer is reused
  // call after call in stream order and grows stream-ordered (cudaMallocAsync), so no call
  // waits on the host. The loss slot, when this call covers it, is summed in fp32 first and
  // left alone by the widening.
  void allreduce_2byte(float* data, size_t count) {
    if (count > wire_cap_) {
      if (wire_) CUDA_CHECK(cudaFreeAsync(wire_, stream_));
      wire_ = nullptr;
      CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&wire_), count * sizeof(uint16_t), stream_));
      wire_cap_ = count;
    }
    size_t skip = count;
    if (exact_ && exact_ >= data && exact_ < data + count) {
      skip = static_cast<size_t>(exact_ - data);
      NCCL_CHECK(ncclAllReduce(data + skip, data + skip, 1, ncclFloat, ncclSum, comm_, stream_));
    }
    const ncclDataType_t type = fmt_ == GradFormat::bf16 ? ncclBfloat16 : ncclHalf;
    nccl_wire::pack(fmt_, data, wire_, count, stream_);
    NCCL_CHECK(ncclAllReduce(wire_, wire_, count, type, ncclSum, comm_, stream_));
    nccl_wire::unpack(fmt_, wire_, data, count, skip, stream_);
  }

  std::unique_ptr<Work> launch_shard(float* data, size_t count, Collective op) {
    if (count % static_cast<size_t>(size_) != 0) {
      throw std::invalid_argument(std::string(collective_name(op)) + ": " + std::to_string(count) +
                                  " floats do not split into " + std::to_string(size_) + " equal blocks");
    }
    Events& ev = next_events();
    launch(ev, data, count, nullptr, true, op);
    return std::make_unique<NcclWork>(*this, ev.seq, ev.end);
  }

  // One reduce-scatter (in the wire format) or all-gather (fp32: parameters) on the comm
  // stream. 2-byte: the whole buffer packed, reduce-scattered as ncclBfloat16/ncclHalf in the
  // staging buffer, and our block widened back into place.
  void shard_call(float* data, size_t count, Collective op) {
    const size_t block = count / static_cast<size_t>(size_);
    float* own = data + static_cast<size_t>(rank_) * block;
    if (op == Collective::allgather) {
      NCCL_CHECK(ncclAllGather(own, data, block, ncclFloat, comm_, stream_));
      return;
    }
    if (fmt_ == GradFormat::fp32) {
      NCCL_CHECK(ncclReduceScatter(data, own, block, ncclFloat, ncclSum, comm_, stream_));
      return;
    }
    if (count > wire_cap_) {
      if (wire_) CUDA_CHECK(cudaFreeAsync(wire_, stream_));
      wire_ = nullptr;
      CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&wire_), count * sizeof(uint16_t), stream_));
      wire_cap_ = count;
    }
    const ncclDataType_t type = fmt_ == GradFormat::bf16 ? ncclBfloat16 : ncclHalf;
    uint16_t* wire_own = wire_ + static_cast<size_t>(rank_) * block;
    nccl_wire::pack(fmt_, data, wire_, count, stream_);
    NCCL_CHECK(ncclReduceScatter(wire_, wire_own, block, type, ncclSum, comm_, stream_));
    nccl_wire::unpack(fmt_, wire_own, own, block, block, stream_);
  }

  // ncclCommInitRank under the collective watchdog: a peer that never joins (dead, stopped, its
  // network unreachable) would block it forever, so it runs on a thread of its own while this
  // thread polls under a WaitScope — past --collective-timeout the watchdog names the ranks not
  // waiting in NCCL's start-up and ends the job, as for a hung all-reduce. The thread shares its
  // result through a shared_ptr: after a timeout MPI_Abort ends the process with it still blocked.
  void init_watched(const ncclUniqueId& id) {
    struct Init {
      std::atomic<bool> done{false};
      ncclResult_t result = ncclSuccess;
      cudaError_t device = cudaSuccess;
      ncclComm_t comm = nullptr;
    };
    auto st = std::make_shared<Init>();
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    const int size = size_, rank = rank_;
    // Test-only (tests/trainers/test_dp_nccl.cpp), inert unless set: this rank never joins.
    const char* stall = std::getenv("DPSCALE_TEST_NCCL_INIT_STALL_RANK");
    const bool stalls = stall && *stall && std::atoi(stall) == rank;
    std::thread t([st, id, device, size, rank, stalls] {
      while (stalls) std::this_thread::sleep_for(std::chrono::seconds(1));
      st->device = cudaSetDevice(device);  // the current GPU is per thread
      if (st->device == cudaSuccess) st->result = ncclCommInitRank(&st->comm, size, id, rank);
      st->done.store(true);
    });
    try {
      WaitScope scope(WaitContext{watchdog_, Channel::nccl_init, 1,
                                  [rank, size] {
                                    return "NCCL start-up (ncclCommInitRank of rank " + std::to_string(rank) + " of " +
                                           std::to_string(size) + ": every rank must join it)";
                                  },
                                  {}, false});
      poll_until([&] { return st->done.load(); });
    } catch (...) {
      t.detach();
      throw;
    }
    t.join();
    CUDA_CHECK(st->device);
    NCCL_CHECK(st->result);
    comm_ = st->comm;
  }

  struct Events {
    cudaEvent_t ready, start, end;
    cudaEvent_t from = nullptr;  // where the call's time starts: its start event, or a batch's previous end
    bool timed = true;           // its end event recorded (a batch's calls but the last, log off: not)
    uint64_t seq = 0;  // which all-reduce used them last, for the watchdog's message
    const float* data = nullptr;
    size_t count = 0;
    double queued_s = 0.0;  // host steady clock at the launch (the call log's queued time)
    Collective op = Collective::allreduce;
  };
  // One all-reduce on the comm stream, between its timing events. `after` null: the comm stream
  // first waits for everything queued on the compute stream so far (the gradient was queued
  // there; not for what the compute stream does later) and a start event times the call from
  // there. Otherwise the call follows the one before it with nothing between them, and is timed
  // from `after`: that call's end event, or where that call's time started when it had none.
  // `timed` false: no end event (allreduce_sum_batch).
  void launch(Events& ev, float* data, size_t count, cudaEvent_t after, bool timed = true,
              Collective op = Collective::allreduce) {
    ev.seq = ++launched_;
    ev.data = data;
    ev.count = count;
    ev.op = op;
    ev.queued_s = steady_seconds();
    if (after) {
      ev.from = after;
    } else {
      CUDA_CHECK(cudaEventRecord(ev.ready, compute_));
      CUDA_CHECK(cudaStreamWaitEvent(stream_, ev.ready, 0));
      CUDA_CHECK(cudaEventRecord(ev.start, stream_));
      ev.from = ev.start;
    }
    hook_.before(data, count, stream_);
    if (op != Collective::allreduce) {
      shard_call(data, count, op);
    } else if (fmt_ == GradFormat::fp32) {
      NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, stream_));
    } else {
      allreduce_2byte(data, count);
    }
    hook_.after(data, count, stream_);
    ev.timed = timed;
    if (timed) CUDA_CHECK(cudaEventRecord(ev.end, stream_));
  }

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
  double allgather_s_ = 0.0;  // the all-gathers' part of busy_s_
  NcclOrderHook hook_;
  GradFormat fmt_ = GradFormat::fp32;
  const float* exact_ = nullptr;  // the loss slot: summed in fp32 whatever the wire format
  uint16_t* wire_ = nullptr;      // the 2-byte staging buffer (comm stream's memory pool)
  size_t wire_cap_ = 0;
  bool log_ = false;
  std::vector<CallTiming> log_calls_;
  cudaEvent_t anchor_ = nullptr;  // recorded on the idle comm stream at anchor_host_s_
  double anchor_host_s_ = 0.0;
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
