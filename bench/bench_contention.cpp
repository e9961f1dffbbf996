// bench_contention.cpp — what the step probe's per-step read of contention costs
// (trainers/diagnosis/contention.h), against the ways it could have been read.
//
//   bench_contention [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_format=json] ...
//
// The process holds T threads (the benchmark's own plus T−1 that sleep, as a rank's comm, MPI
// and loader threads mostly do; a rank of the CPU trainers has 4–6). Per read:
//   contention/read/threads:T        ContentionReader::read(): one pread of each thread's
//                                    schedstat on descriptors opened once, and one getrusage
//                                    (the process's involuntary switches): the per-step read
//   contention/refresh/threads:T     ContentionReader::refresh_threads(): list /proc/self/task
//                                    (once an epoch)
//   contention/status/threads:T      each thread's schedstat and status opened, read and closed
//                                    (read_thread_sched): the per-thread involuntary switches
//                                    the per-step read takes from getrusage instead
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <filesystem>
#include <string>
#include <mutex>
#include <thread>
#include <vector>

#include "trainers/diagnosis/contention.h"

namespace dpscale::bench {
namespace {

// T−1 threads asleep until the object goes out of scope.
class Sleepers {
 public:
  explicit Sleepers(int n) {
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return stop_; });
      });
    }
  }
  ~Sleepers() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

void BM_Read(benchmark::State& state) {
  Sleepers others(static_cast<int>(state.range(0)) - 1);
  ContentionReader reader;
  double delay = 0;
  for (auto _ : state) {
    const Contention c = reader.read();
    delay += c.run_delay_s;
    benchmark::DoNotOptimize(delay);
  }
  state.counters["threads_read"] = reader.threads();
}

void BM_Refresh(benchmark::State& state) {
  Sleepers others(static_cast<int>(state.range(0)) - 1);
  ContentionReader reader;
  for (auto _ : state) reader.refresh_threads();
  state.counters["threads_read"] = reader.threads();
}

// This process's thread ids, from /proc/self/task.
std::vector<pid_t> thread_ids() {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    out.push_back(static_cast<pid_t>(std::stoi(e.path().filename().string())));
  }
  return out;
}

void BM_Status(benchmark::State& state) {
  Sleepers others(static_cast<int>(state.range(0)) - 1);
  const std::vector<pid_t> tids = thread_ids();
  int64_t sum = 0;
  for (auto _ : state) {
    for (pid_t tid : tids) {
      const auto t = read_thread_sched(tid);
      sum += t ? t->involuntary_switches : 0;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.counters["threads_read"] = static_cast<double>(tids.size());
}

BENCHMARK(BM_Read)->Name("contention/read")->ArgName("threads")->Arg(1)->Arg(4)->Arg(8)->Arg(16);
BENCHMARK(BM_Refresh)->Name("contention/refresh")->ArgName("threads")->Arg(1)->Arg(4)->Arg(8)->Arg(16);
BENCHMARK(BM_Status)->Name("contention/status")->ArgName("threads")->Arg(1)->Arg(4)->Arg(8)->Arg(16);

}  // namespace
}  // namespace dpscale::bench

BENCHMARK_MAIN();
