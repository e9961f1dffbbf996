// watchdog.h — how a rank waits for a collective: polled rather than spun, and watched.
//
// Every wait of a collective — the comm thread's all-reduces (native, ring, star), the World's
// barrier and gathers, NCCL's start-up and per-step drain — goes through poll_until() (or mpi_wait_all(),
// which polls MPI_Testall):
//
//   waited      0 ─ 50 µs         50 µs ─ ...                             timeout T
//   polls       back to back      sleeping between polls: waited/32,       print one line, end
//               (the normal case) clamped to [10 µs, 1 ms]                 the whole job
//
// The sleep is proportional to the time already waited, so it adds at most ~1/32 (3 %) to a
// wait however long, and a rank waiting on a stalled peer polls ~1000 times a second instead of
// spinning a core at 100 % (measured: docs/reliability.md; experiments/reliability/data/allreduce-wait.txt).
//
// Which ranks have not arrived: MPI cannot say who has joined a pending collective, so a rank
// that has waited 100 ms tells every peer where it waits — a heartbeat (channel, sequence
// number), every 0.5 s while it waits, on a communicator of its own — and keeps what the peers
// told it. On a timeout it listens for one more second, then names the ranks that never said
// they wait at this collective: stopped, dead, or still computing. Then MPI_Abort ends every
// rank (and mpirun kills a stopped one), after `before_abort` (NCCL: ncclCommAbort).
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace dpscale {

class CollectiveWatchdog;

// The sequences of collectives every rank runs in the same order: its number in one of them
// names a collective across ranks.
enum class Channel : int32_t {
  gradients = 0,  // the gradient all-reduces, numbered by the communicator from 1
  world = 1,      // the World's barrier, all-gather, gather and max, numbered by the World
  nccl_init = 2,  // NCCL's start-up (ncclCommInitRank), once per communicator: sequence number 1
};
inline constexpr int kChannels = 3;

// What the calling thread waits for. Set by a WaitScope around the collective.
struct WaitContext {
  CollectiveWatchdog* watchdog = nullptr;  // null: no deadline, no heartbeats (polled all the same)
  Channel channel = Channel::gradients;
  uint64_t seq = 0;
  std::function<std::string()> what;        // "all-reduce #12 of tensor layers.1.weight ..."; on a timeout only
  std::function<void()> before_abort;       // NCCL: abort the communicator before MPI_Abort
  bool block = false;                       // MPI_Waitall, spinning as the library does (bench_allreduce --wait block)
};

// Installs `ctx` as the calling thread's context until the scope ends (then the previous one).
class WaitScope {
 public:
  explicit WaitScope(WaitContext ctx);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  WaitContext ctx_;
  const WaitContext* previous_;
};

// Polls done() until it returns true, as described above, under the thread's WaitContext.
void poll_until(const std::function<bool()>& done);
// Waits for n MPI requests (MPI_Testall polled; MPI_Waitall when the context says block).
void mpi_wait_all(int n, MPI_Request* reqs);
// True when the thread's context asks for the library's blocking calls (bench_allreduce --wait block).
bool waits_block();

class CollectiveWatchdog {
 public:
  // Collective over `world`: duplicates it for the heartbeats.
  CollectiveWatchdog(MPI_Comm world, double timeout_s);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  void set_timeout(double seconds) { timeout_s_ = seconds; }
  double timeout() const { return timeout_s_; }

  // Called between polls of a wait that has lasted `waited_s`: heartbeats, and past the timeout
  // (plus the grace second) the report and MPI_Abort.
  void tick(const WaitContext& ctx, double waited_s);

  // Ranks that have not said they wait at (channel, seq), as "1, 3"; "" when all have.
  std::string absent(Channel channel, uint64_t seq);

 private:
  struct Beat {
    int32_t channel;
    int32_t rank;
    uint64_t seq;
  };
  void beat(Channel channel, uint64_t seq);
  void listen();  // under mu_
  [[noreturn]] void expire(const WaitContext& ctx, double waited_s);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  double timeout_s_;

  std::mutex mu_;  // the comm thread and the main thread may both wait, even at once
  std::atomic<bool> expiring_{false};  // one thread reports the timeout and aborts; others wait
  Beat in_{};
  MPI_Request in_req_ = MPI_REQUEST_NULL;
  std::vector<Beat> out_;                         // one per peer: the buffer of its last heartbeat
  std::vector<MPI_Request> out_req_;
  std::vector<std::array<uint64_t, kChannels>> seen_;  // [rank][channel]: highest seq it waits at
  double last_beat_s_ = -1.0;                          // waited_s of the last heartbeat this wait
  uint64_t last_beat_seq_ = 0;
};

}  // namespace dpscale
