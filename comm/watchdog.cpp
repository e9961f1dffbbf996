// watchdog.cpp — polled waits, heartbeats, and the timeout that ends the job.
#include "watchdog.h"

#include <errno.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include "mpi_check.h"

namespace dpscale {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kMaxSleep = std::chrono::milliseconds(1);
constexpr auto kGap = std::chrono::milliseconds(500);  // between two polls: this process was stopped
constexpr double kSpinS = 50e-6;         // poll back to back this long: most all-reduces end here
constexpr double kMinSleepS = 10e-6;
constexpr double kMaxSleepS = 1e-3;
constexpr double kSleepFraction = 1.0 / 32;  // of the time already waited
constexpr double kFirstBeatS = 0.1;      // a wait this long tells the peers where it waits...
constexpr double kBeatEveryS = 0.5;      // ...and again this often
constexpr double kGraceS = 1.0;          // after the timeout, listen this long before naming ranks
constexpr int kBeatTag = 7303;           // small, as the ring's tag (ring_allreduce.cpp)

thread_local const WaitContext* t_context = nullptr;
const WaitContext kNoContext{};

}  // namespace

WaitScope::WaitScope(WaitContext ctx) : ctx_(std::move(ctx)), previous_(t_context) { t_context = &ctx_; }
WaitScope::~WaitScope() { t_context = previous_; }

void poll_until(const std::function<bool()>& done) {
  if (done()) return;
  const WaitContext& ctx = t_context ? *t_context : kNoContext;
  auto start = Clock::now(), last = start;
  for (;;) {
    if (done()) return;
    const auto now = Clock::now();
    // Time this process was not running (SIGSTOP, a suspended VM) is not time it waited: a rank
    // continued after a stop must not time out at once and blame the peers that waited for it.
    if (now - last > kGap) start += (now - last) - kMaxSleep;
    last = now;
    const double waited = std::chrono::duration<double>(now - start).count();
    if (waited < kSpinS) continue;
    if (ctx.watchdog) ctx.watchdog->tick(ctx, waited);
    const double sleep = std::clamp(waited * kSleepFraction, kMinSleepS, kMaxSleepS);
    std::this_thread::sleep_for(std::chrono::duration<double>(sleep));
  }
}

bool waits_block() { return t_context && t_context->block; }

void mpi_wait_all(int n, MPI_Request* reqs) {
  if (t_context && t_context->block) {
    MPI_CHECK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    return;
  }
  poll_until([&] {
    int flag = 0;
    MPI_CHECK(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
    return flag != 0;
  });
}

CollectiveWatchdog::CollectiveWatchdog(MPI_Comm world, double timeout_s) : timeout_s_(timeout_s) {
  MPI_CHECK(MPI_Comm_dup(world, &comm_));
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
  out_.resize(static_cast<size_t>(size_));
  out_req_.assign(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  seen_.assign(static_cast<size_t>(size_), {});
  MPI_CHECK(MPI_Irecv(&in_, sizeof in_, MPI_BYTE, MPI_ANY_SOURCE, kBeatTag, comm_, &in_req_));
}

CollectiveWatchdog::~CollectiveWatchdog() {
  // Heartbeats are 16-byte eager messages, complete once copied out; one to a peer that has gone
  // is released unfinished (MPI_Request_free), its buffer outliving nothing that reads it. Beats
  // never received are dropped with the communicator.
  for (MPI_Request& r : out_req_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  if (in_req_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&in_req_);
    MPI_Wait(&in_req_, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&comm_);
}

void CollectiveWatchdog::listen() {
  for (;;) {
    int flag = 0;
    MPI_CHECK(MPI_Test(&in_req_, &flag, MPI_STATUS_IGNORE));
    if (!flag) return;
    if (in_.rank >= 0 && in_.rank < size_ && in_.channel >= 0 && in_.channel < kChannels) {
      uint64_t& s = seen_[static_cast<size_t>(in_.rank)][static_cast<size_t>(in_.channel)];
      s = std::max(s, in_.seq);
    }
    MPI_CHECK(MPI_Irecv(&in_, sizeof in_, MPI_BYTE, MPI_ANY_SOURCE, kBeatTag, comm_, &in_req_));
  }
}

void CollectiveWatchdog::beat(Channel channel, uint64_t seq) {
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    MPI_Request& r = out_req_[static_cast<size_t>(p)];
    if (r != MPI_REQUEST_NULL) {
      int flag = 0;
      MPI_CHECK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
      if (!flag) continue;  // the last one to this peer is still on its way: skip, never pile up
    }
    out_[static_cast<size_t>(p)] = Beat{static_cast<int32_t>(channel), rank_, seq};
    MPI_CHECK(MPI_Isend(&out_[static_cast<size_t>(p)], sizeof(Beat), MPI_BYTE, p, kBeatTag, comm_, &r));
  }
}

void CollectiveWatchdog::tick(const WaitContext& ctx, double waited_s) {
  if (waited_s < kFirstBeatS) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool new_wait = ctx.seq != last_beat_seq_ || waited_s < last_beat_s_;
    if (new_wait || waited_s - last_beat_s_ >= kBeatEveryS) {
      beat(ctx.channel, ctx.seq);
      last_beat_s_ = waited_s;
      last_beat_seq_ = ctx.seq;
    }
    listen();
  }
  if (waited_s >= timeout_s_ + kGraceS) expire(ctx, waited_s);
}

std::string CollectiveWatchdog::absent(Channel channel, uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  listen();
  std::string out;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || seen_[static_cast<size_t>(p)][static_cast<size_t>(channel)] >= seq) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(p);
  }
  return out;
}

void CollectiveWatchdog::expire(const WaitContext& ctx, double waited_s) {
  // Two threads of one rank can time out together (the comm thread in an all-reduce, the main
  // thread in a World collective, both waiting on the same missing peer): the first reports and
  // aborts the job; any other waits here for the abort, so the job gets one line, not two
  // interleaved ones, and one MPI_Abort.
  if (expiring_.exchange(true)) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  const std::string missing = absent(ctx.channel, ctx.seq);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", timeout_s_);
  // One line, the program's name first as every trainer line is (glibc's short name), written
  // in one piece.
  std::ostringstream line;
  line << program_invocation_short_name << " (rank " << rank_ << "): collective timeout: "
       << (ctx.what ? ctx.what() : std::string("a collective")) << " did not finish within " << secs
       << " s (--collective-timeout); "
       << (missing.empty() ? std::string("every rank is waiting there: the collective itself is stuck")
                           : "not arrived: rank " + missing + " (stopped, dead, or still computing)")
       << "; aborting the job\n";
  std::cerr << line.str() << std::flush;
  if (ctx.before_abort) ctx.before_abort();
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // MPI_Abort does not return
}

}  // namespace dpscale
