// mpi_communicator.cpp — the comm thread and its queue.
#include "mpi_communicator.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>

#include "hier_allreduce.h"
#include "grad_compress.h"
#include "mpi_check.h"
#include "shard_collectives.h"

namespace dpscale {

using Clock = std::chrono::steady_clock;

namespace {
double seconds_since_epoch(Clock::time_point t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }
}  // namespace

class MpiCommunicator::MpiWork final : public Work {
 public:
  MpiWork(MpiCommunicator& c, uint64_t seq) : c_(c), seq_(seq) {}
  void wait() override { c_.wait_for(seq_); }
  bool done() override { return c_.is_done(seq_); }

 private:
  MpiCommunicator& c_;
  uint64_t seq_;
};

MpiCommunicator::MpiCommunicator(MPI_Comm world, AllreduceAlgo algo, LinkModel link, CollectiveWatchdog* watchdog)
    : algo_(algo), link_(std::move(link)), watchdog_(watchdog) {
  MPI_CHECK(MPI_Comm_dup(world, &comm_));
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
  // Where the ranks sit, for the link model and hier (collective; made before the thread starts):
  // MPI's nodes, or blocks of ranks_per_node ranks when a two-tier --link says so. Only they
  // need it: with one tier, ring and star take the same time whatever the nodes (link_model.h).
  shape_ = NodeShape{1, size_};
  if (link_.two_tier || algo_ == AllreduceAlgo::hier) shape_ = node_shape(comm_, link_.ranks_per_node);
  // hier on uneven nodes is refused here, on every rank alike, rather than in the comm thread
  // (an empty all-reduce makes the check and moves nothing).
  if (algo_ == AllreduceAlgo::hier) hier_allreduce_sum(nullptr, 0, MPI_FLOAT, comm_, link_.ranks_per_node);
  worker_ = std::thread([this] { run(); });
}

MpiCommunicator::~MpiCommunicator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queued_cv_.notify_all();
  worker_.join();
  MPI_Comm_free(&comm_);
}

std::unique_ptr<Work> MpiCommunicator::allreduce_sum(float* data, size_t count) {
  return enqueue(data, count, Collective::allreduce);
}

std::unique_ptr<Work> MpiCommunicator::reduce_scatter_sum(float* data, size_t count) {
  return enqueue(data, count, Collective::reduce_scatter);
}

std::unique_ptr<Work> MpiCommunicator::allgather(float* data, size_t count) {
  return enqueue(data, count, Collective::allgather);
}

std::unique_ptr<Work> MpiCommunicator::enqueue(float* data, size_t count, Collective op) {
  if (op != Collective::allreduce) {
    // Refused here, on the caller's thread, rather than by an abort on the comm thread: the
    // sharded trainer sizes its units for it, so this is a programming error.
    if (count % static_cast<size_t>(size_) != 0) {
      throw std::invalid_argument(std::string(collective_name(op)) + ": " + std::to_string(count) +
                                  " floats do not split into " + std::to_string(size_) + " equal blocks");
    }
    if (algo_ != AllreduceAlgo::native && algo_ != AllreduceAlgo::ring) {
      throw std::logic_error(std::string(collective_name(op)) + ": --allreduce " + allreduce_algo_name(algo_) +
                             " has none (native or ring)");
    }
  }
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seq = ++launched_;
    queue_.push_back(Task{data, count, seq, seconds_since_epoch(Clock::now()), op});
  }
  queued_cv_.notify_one();
  return std::make_unique<MpiWork>(*this, seq);
}

void MpiCommunicator::wait_for(uint64_t seq) {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return completed_ >= seq; });
}

bool MpiCommunicator::is_done(uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ >= seq;
}

void MpiCommunicator::finish() {
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return completed_ == launched_; });
}

double MpiCommunicator::take_busy_seconds() {
  std::lock_guard<std::mutex> lock(mu_);
  const double s = busy_s_;
  busy_s_ = 0.0;
  allgather_s_ = 0.0;
  return s;
}

double MpiCommunicator::take_allgather_seconds() {
  std::lock_guard<std::mutex> lock(mu_);
  const double s = allgather_s_;
  allgather_s_ = 0.0;
  return s;
}

size_t MpiCommunicator::shard_collective(const Task& task) {
  if (task.op == Collective::allgather) {
    dpscale::allgather(algo_, task.data, task.count, comm_);
    return task.count * sizeof(float);
  }
  if (fmt_ == GradFormat::fp32) {
    dpscale::reduce_scatter_sum(algo_, task.data, task.count, comm_);
  } else {
    dpscale::reduce_scatter_sum_2byte(algo_, fmt_, task.data, task.count, comm_);
  }
  return grad_wire_bytes(fmt_, task.count, false);
}

void MpiCommunicator::log_calls(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  log_calls_ = on;
}

std::vector<CallTiming> MpiCommunicator::take_call_log() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CallTiming> out;
  out.swap(call_log_);
  return out;
}

size_t MpiCommunicator::reduce(float* data, size_t count) {
  // The exact element (the loss slot), when this task holds it, goes alone in fp32.
  const bool holds_exact = exact_ && exact_ >= data && exact_ < data + count;
  if (fmt_ == GradFormat::fp32) {
    if (algo_ == AllreduceAlgo::hier) {
      hier_allreduce_sum(data, count, MPI_FLOAT, comm_, link_.ranks_per_node);
    } else {
      dpscale::allreduce_sum(algo_, data, count, MPI_FLOAT, comm_);
    }
    return grad_wire_bytes(fmt_, count, holds_exact);
  }
  // 2-byte formats with hier are refused at start-up (check_comm_options): hier's phases sum
  // float, double and integers only. 2-byte elements around the exact one.
  const size_t before = holds_exact ? static_cast<size_t>(exact_ - data) : count;
  allreduce_sum_2byte(algo_, fmt_, data, before, comm_);
  if (holds_exact) {
    allreduce_sum_2byte(algo_, fmt_, data + before + 1, count - before - 1, comm_);
    dpscale::allreduce_sum(algo_, data + before, 1, MPI_FLOAT, comm_);
  }
  return grad_wire_bytes(fmt_, count, holds_exact);
}

void MpiCommunicator::run() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queued_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop requested and nothing left
      task = queue_.front();
      queue_.pop_front();
    }
    const auto start = Clock::now();
    size_t wire_bytes = task.count * sizeof(float);
    try {
      // Every wait inside is polled and, with a watchdog, bounded (watchdog.h); hier's node-local
      // phases are the library's blocking collectives, outside the watchdog's reach.
      WaitScope scope(WaitContext{watchdog_, Channel::gradients, task.seq,
                                  [&] { return describe_allreduce(task.seq, task.data, task.count, task.op); }, {},
                                  false});
      wire_bytes = task.op == Collective::allreduce ? reduce(task.data, task.count) : shard_collective(task);
    } catch (const std::exception& e) {
      // Nobody can wait on a failed collective: say what happened and end the whole job, so
      // no rank stays blocked in the next all-reduce (an escaping exception would only
      // std::terminate this process).
      std::cerr << "dpscale (rank " << rank_ << "): comm thread: " << e.what() << std::endl;
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    // Where the link model says this call ends: the real call's end, or the modelled time's.
    auto model_end = Clock::now();
    if (link_.enabled()) {
      // Hold until the modelled link time has passed since the all-reduce began: the real
      // transfer counts towards it, so the result takes max(real, modelled).
      // Capped at a year: converting a larger double to the clock's int64 nanoseconds
      // overflows (undefined; in practice a deadline in the past, i.e. no hold at all).
      const double modelled = task.op == Collective::allreduce ? modelled_seconds(algo_, link_, wire_bytes, shape_)
                                                               : modelled_shard_seconds(link_, wire_bytes, shape_);
      const double model_s = std::min(modelled, 3.2e7);
      const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(model_s));
      model_end = std::max(model_end, deadline);
      std::this_thread::sleep_until(deadline);
    }
    const double slow_s = slow_extra_s_.load();
    const size_t slow_floats = slow_floats_.load();
    if (slow_s > 0 && slow_floats > 0) {
      // The slower link of an injected straggler: this call's share of the step's extra time.
      const double extra = slow_s * static_cast<double>(task.count) / static_cast<double>(slow_floats);
      std::this_thread::sleep_until(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(extra)));
    }
    const auto end = Clock::now();
    const double elapsed = std::chrono::duration<double>(end - start).count();
    const double link_s = std::max(0.0, std::chrono::duration<double>(end - model_end).count());
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_s_ += elapsed;
      if (task.op == Collective::allgather) allgather_s_ += elapsed;
      if (log_calls_) {
        const double start_s = seconds_since_epoch(start);
        call_log_.push_back(
            CallTiming{task.data, task.count, task.queued_s, start_s, start_s + elapsed, link_s, task.op});
      }
      completed_ = task.seq;
    }
    done_cv_.notify_all();
  }
}

}  // namespace dpscale
