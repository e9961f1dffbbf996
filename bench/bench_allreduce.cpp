// bench_allreduce.cpp — all-reduce bandwidth in the manner of NVIDIA's nccl-tests, for the
// MPI library's own algorithm (native), the workshop's ring and star (comm/), and NCCL where
// every rank has a GPU.
//
//   mpirun -np 4 bench_allreduce                          8 B .. 256 MB, doubling, all algorithms
//   mpirun -np 2 bench_allreduce -b 1M -e 64M -c          with a check of every element
//   mpirun -np 2 bench_allreduce --algos ring --benchmark_format=json --benchmark_out=ar.json
//   mpirun -np 4 bench_allreduce -b 1M -e 64M --link ib100   what a 100 Gb/s InfiniBand link would do
//   scripts/ns-mpirun -np 4 --npernode 2 bench_allreduce --algos ring,hier --predict intra=..,inter=..
//                                               two emulated nodes, with the α-β prediction beside
//
// Options (-b/-e/-f/-i/-n/-w/-c/--algos/--link): bench/allreduce_options.h; Google Benchmark's own
// --benchmark_* flags work as usual (--benchmark_enable_random_interleaving excepted: ranks
// must run the same benchmarks in the same order).
//
// Measuring, per (algorithm, size): the buffer is restored from a pristine copy and the ranks
// meet at a barrier (both untimed), then each rank times the all-reduce with a steady clock;
// the iteration's time is the MAX over ranks (an MPI_Allreduce, untimed) — an all-reduce is
// done when its slowest rank is. Every rank runs the same fixed number of iterations (no
// adaptive iteration count that could differ between ranks and deadlock them); reported time
// = mean of the per-iteration maxima. algbw = bytes / time / 1e9, busbw = algbw · 2(K-1)/K
// (contract/allreduce_algo.h). Only rank 0 reports; it also prints the nccl-tests-like table (to
// stdout with the console format, to stderr otherwise so stdout stays pure JSON/CSV).
//
// Data: rank r's element i is (i mod 97) + 1 + 3r, small integers, so every summation order
// gives the exact sum K·((i mod 97) + 1) + 3K(K-1)/2 and -c compares exactly.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "allreduce_options.h"
#include "allreduce_predict.h"
#include "allreduce_table.h"
#include "bench_args.h"
#include "comm/allreduce_algos.h"
#include "comm/traffic.h"
#include "comm/hier_allreduce.h"
#include "comm/mpi_check.h"
#include "comm/mpi_env.h"
#include "comm/watchdog.h"
#include "models/device.h"
#include "core/errors.h"
#include "models/gpu_uuid.h"
#include "trainers/gpu_choice.h"
#if DPSCALE_HAVE_CUDA
#include "comm/nccl_communicator.h"
#endif

namespace dpscale::bench {
namespace {

using Clock = std::chrono::steady_clock;

float value_of(size_t i, int rank) { return static_cast<float>(i % 97 + 1 + 3 * static_cast<size_t>(rank)); }
float expected_sum(size_t i, int k) {
  return static_cast<float>(static_cast<size_t>(k) * (i % 97 + 1) + 3 * static_cast<size_t>(k) * (k - 1) / 2);
}
long long count_wrong(const float* d, size_t count, int k) {
  long long wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += d[i] != expected_sum(i, k);
  return wrong;
}

// One way of all-reducing `count` floats of this rank's buffer: restore() puts the pristine data
// back (untimed), run() is the timed all-reduce (returns when this rank's result is complete),
// wrong() counts this rank's wrong elements.
class Target {
 public:
  virtual ~Target() = default;
  virtual void restore(size_t count) = 0;
  virtual void run(size_t count) = 0;
  virtual long long wrong(size_t count, int k) = 0;
};

class MpiTarget final : public Target {
 public:
  MpiTarget(AllreduceAlgo algo, MPI_Comm comm, const std::vector<float>& pristine, std::vector<float>& data,
            int ranks_per_node, bool block_wait)
      : algo_(algo), comm_(comm), pristine_(pristine), data_(data), ranks_per_node_(ranks_per_node),
        block_wait_(block_wait) {}
  void restore(size_t count) override { std::memcpy(data_.data(), pristine_.data(), count * sizeof(float)); }
  void run(size_t count) override {
    // --wait: the trainers' polled wait (no watchdog: no deadline) or the library's blocking one.
    WaitScope scope(WaitContext{nullptr, Channel::gradients, 0, {}, {}, block_wait_});
    // hier's nodes: MPI's, or the two-tier link's emulated blocks of ranks.
    if (algo_ == AllreduceAlgo::hier) return hier_allreduce_sum(data_.data(), count, MPI_FLOAT, comm_, ranks_per_node_);
    allreduce_sum(algo_, data_.data(), count, MPI_FLOAT, comm_);
  }
  long long wrong(size_t count, int k) override { return count_wrong(data_.data(), count, k); }

 private:
  AllreduceAlgo algo_;
  MPI_Comm comm_;
  const std::vector<float>& pristine_;
  std::vector<float>& data_;
  int ranks_per_node_;
  bool block_wait_;
};

#if DPSCALE_HAVE_CUDA
// NCCL through the project's own NCCL Communicator: device buffers, its comm stream; run()
// launches and waits for the all-reduce's completion event. restore(), outside the timed
// region, drains the communicator: its events go back to the pool, so no timed iteration
// creates CUDA events.
class NcclTarget final : public Target {
 public:
  NcclTarget(int gpu, MPI_Comm comm, const std::vector<float>& pristine)
      : dev_(make_device(DeviceOptions{"cuda", 1, false, gpu})),
        comm_(make_nccl_communicator(*dev_, comm)),
        pristine_(pristine),
        buf_(*dev_, pristine.size()),
        host_(pristine.size()) {}
  void restore(size_t count) override {
    dev_->upload(buf_.data(), pristine_.data(), count * sizeof(float));
    dev_->synchronize();
    comm_->drain();
  }
  void run(size_t count) override { comm_->allreduce_sum(buf_.data(), count)->wait(); }
  long long wrong(size_t count, int k) override {
    dev_->download(host_.data(), buf_.data(), count * sizeof(float));
    return count_wrong(host_.data(), count, k);
  }

 private:
  std::unique_ptr<Device> dev_;
  std::unique_ptr<Communicator> comm_;
  const std::vector<float>& pristine_;
  DeviceBuffer<float> buf_;
  std::vector<float> host_;
};
#endif

struct Context {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, k = 1;
  bool check = false;
  AllreduceTable* table = nullptr;  // rank 0 only
  long long wrong_total = 0;        // summed over ranks, on every rank
  std::vector<Prediction>* predictions = nullptr;  // rank 0, with --predict
};

// `hold_s` > 0 (--link): like the MpiCommunicator's link emulation, the all-reduce counts as
// done when its modelled time has passed since it began, or when it is done, whichever is later.
void run_allreduce(benchmark::State& state, Context& ctx, Target& target, const std::string& algo,
                   double rank0_sent, size_t nbytes, int warmup, double hold_s, double model_s) {
  const size_t count = nbytes / sizeof(float);
  for (int i = 0; i < warmup; ++i) {
    target.restore(count);
    target.run(count);
  }
  double total = 0.0;
  long long wrong = 0;
  const Traffic before = traffic_so_far();
  for (auto _ : state) {
    target.restore(count);
    MPI_CHECK(MPI_Barrier(ctx.comm));
    const auto t0 = Clock::now();
    target.run(count);
    if (hold_s > 0.0) {
      std::this_thread::sleep_until(t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(hold_s)));
    }
    double t = std::chrono::duration<double>(Clock::now() - t0).count();
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, ctx.comm));
    state.SetIterationTime(t);
    total += t;
    if (ctx.check) wrong += target.wrong(count, ctx.k);
  }
  if (ctx.check) {
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, ctx.comm));
    ctx.wrong_total += wrong;
  }
  const double seconds = total / static_cast<double>(state.iterations());
  const AllreduceBandwidth bw = allreduce_bandwidth(nbytes, seconds, ctx.k);
  state.counters["bytes"] = static_cast<double>(nbytes);
  state.counters["count"] = static_cast<double>(count);
  state.counters["nranks"] = ctx.k;
  state.counters["algbw_GBps"] = bw.algbw_gbps;
  state.counters["busbw_GBps"] = bw.busbw_gbps;
  // The own algorithms count their bytes at the MPI calls (comm/traffic.h): rank 0's per
  // all-reduce are measured; the library's MPI_Allreduce and NCCL are not counted, so theirs are
  // the model's (a ring's), and bytes_counted says which.
  const Traffic after = traffic_so_far();
  const double iters = static_cast<double>(state.iterations());
  const double sent = (after.sent_bytes - before.sent_bytes) / iters;
  const double received = (after.received_bytes - before.received_bytes) / iters;
  const bool counted = sent > 0.0 || received > 0.0;
  if (counted) rank0_sent = sent;
  state.counters["bytes_counted"] = counted ? 1.0 : 0.0;
  state.counters["rank0_received_bytes"] = counted ? received : rank0_sent;
  state.counters["rank0_sent_bytes"] = rank0_sent;
  if (ctx.check) state.counters["wrong"] = static_cast<double>(wrong);
  if (model_s > 0.0) state.counters["model_s"] = model_s;
  if (ctx.predictions && model_s > 0.0) ctx.predictions->push_back({algo, nbytes, seconds, model_s});
  if (ctx.table) ctx.table->add(algo, {nbytes, count, seconds, rank0_sent, ctx.check ? wrong : -1});
  if (wrong > 0) state.SkipWithError((std::to_string(wrong) + " wrong elements").c_str());
}

// Cores the ranks on this node may run on together: the union of their affinity masks (mpirun
// binds each rank to a core when there are enough, to all of them when oversubscribed).
int node_cores() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return usable_cores();
  MPI_Comm local;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  cpu_set_t all;
  MPI_CHECK(MPI_Allreduce(&mine, &all, static_cast<int>(sizeof all), MPI_BYTE, MPI_BOR, local));
  MPI_CHECK(MPI_Comm_free(&local));
  return CPU_COUNT(&all);
}

int run(int argc, char** argv, const MpiEnv& env) {
  const int rank = env.rank(), k = env.world_size();
  const AllreduceBenchOptions opts = take_allreduce_options(argc, argv);
  if (opts.help) {
    if (rank == 0) std::fputs(allreduce_usage().c_str(), stdout);
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--benchmark_enable_random_interleaving", 0) == 0 && a.find("=false") == std::string::npos) {
      throw InputError("--benchmark_enable_random_interleaving: ranks would run benchmarks in different orders and deadlock");
    }
  }
  const std::string format = benchmark_format(argc, argv);
  // Only rank 0 writes --benchmark_out; the others would truncate the same file.
  if (rank != 0) drop_flags(argc, argv, "--benchmark_out");
  benchmark::Initialize(&argc, argv);
  if (argc > 1) {
    if (rank == 0) benchmark::ReportUnrecognizedArguments(argc, argv);
    return 2;
  }

  // The algorithms that can run here: NCCL needs the CUDA backend and a GPU of its own for every
  // rank (NCCL refuses two ranks on one GPU), judged by GPU UUID over the node as the trainers
  // judge it (trainers/gpu_choice.h), so one GPU per rank by CUDA_VISIBLE_DEVICES works; all
  // ranks must agree, hence the MIN.
  int gpus = cuda_compiled() ? cuda_device_count() : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &gpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  GpuChoice gpu;
  if (cuda_compiled()) {
    struct Visible {
      int32_t n = 0;
      GpuUuid uuid[64] = {};
    } mine;
    try {
      const std::vector<GpuUuid> uuids = cuda_gpu_uuids();
      mine.n = static_cast<int32_t>(std::min<size_t>(uuids.size(), 64));
      std::copy(uuids.begin(), uuids.begin() + mine.n, mine.uuid);
    } catch (const std::exception&) {
      mine.n = 0;
    }
    std::vector<Visible> all(static_cast<size_t>(env.local_size()));
    MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, env.node_comm()));
    std::vector<std::vector<GpuUuid>> visible;
    for (const Visible& v : all) visible.emplace_back(v.uuid, v.uuid + v.n);
    gpu = choose_gpu(visible, env.local_rank());
  }
  int nccl_ok = cuda_compiled() && gpu.device_index >= 0 && gpu.conflict.empty() ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &nccl_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  std::vector<std::string> algos = opts.algos;
  std::string nccl_note;
  if (algos.empty()) {
    algos = {"native", "ring", "star"};
    if (nccl_ok && !opts.link.enabled()) algos.push_back("nccl");
  }
  if (!nccl_ok) {
    nccl_note = !cuda_compiled() ? "nccl skipped: built without the CUDA backend"
                : gpus == 0          ? "nccl skipped: no GPU answers"
                                     : "nccl skipped: two ranks would share a GPU (NCCL needs one GPU per rank)";
    for (const std::string& a : algos) {
      if (a == "nccl") throw InputError("--algos nccl: " + nccl_note);
    }
  }

  const int cores = node_cores();  // collective
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  const std::vector<size_t> sizes = sweep_sizes(opts);
  const size_t max_count = sizes.back() / sizeof(float);
  std::vector<float> pristine(max_count), data(max_count);
  for (size_t i = 0; i < max_count; ++i) pristine[i] = value_of(i, rank);

  AllreduceTable table(k, algos);
  // Where the ranks sit (collective): for the link model of --link/--predict and for hier.
  const int ranks_per_node = opts.link.enabled() ? opts.link.ranks_per_node : opts.predict.ranks_per_node;
  const NodeShape shape = node_shape(comm, ranks_per_node);
  std::vector<Prediction> predictions;
  Context ctx{comm, rank, k, opts.check, rank == 0 ? &table : nullptr, 0,
              rank == 0 && opts.predict.enabled() ? &predictions : nullptr};
  std::vector<std::unique_ptr<Target>> targets;
  for (const std::string& a : algos) {
    if (a == "nccl") {
#if DPSCALE_HAVE_CUDA
      targets.push_back(std::make_unique<NcclTarget>(gpu.device_index, comm, pristine));
#else
      throw std::logic_error("nccl selected in a build without CUDA");
#endif
    } else {
      targets.push_back(std::make_unique<MpiTarget>(parse_allreduce_algo(a), comm, pristine, data, ranks_per_node,
                                                    opts.block_wait));
    }
    Target& target = *targets.back();
    // Rank 0's traffic: NCCL's all-reduce of large messages is a ring too.
    const AllreduceAlgo model = a == "nccl" ? AllreduceAlgo::ring : parse_allreduce_algo(a);
    for (size_t nbytes : sizes) {
      std::string name = "allreduce/";
      name += a;
      name += "/np:" + std::to_string(k) + "/bytes:" + std::to_string(nbytes);
      const int warmup = warmup_for(opts, nbytes);
      const double r0 = rank0_bytes_sent(model, nbytes, k);
      const double hold = a == "nccl" ? 0.0 : modelled_seconds(model, opts.link, nbytes, shape);  // 0 without --link
      const double predicted = a == "nccl" ? 0.0 : modelled_seconds(model, opts.predict, nbytes, shape);
      benchmark::RegisterBenchmark(name.c_str(), [&ctx, &target, a, r0, nbytes, warmup, hold, predicted](benchmark::State& st) {
        run_allreduce(st, ctx, target, a, r0, nbytes, warmup, hold, predicted);
      })->Iterations(iterations_for(opts, nbytes))->UseManualTime()->Unit(benchmark::kMicrosecond);
    }
  }

  NullReporter null;
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    benchmark::RunSpecifiedBenchmarks(&null);
  }

  if (rank == 0 && !table.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);

    std::vector<std::string> banner = {
        "# dpscale bench_allreduce (nccl-tests style): nranks " + std::to_string(k) + " on " +
            std::to_string(env.n_nodes()) + " node(s), " + env.library_version(),
        "# minBytes " + std::to_string(opts.min_bytes) + " maxBytes " + std::to_string(opts.max_bytes) +
            (opts.step_bytes ? " step: " + std::to_string(opts.step_bytes) + "(bytes)"
                             : " step: " + std::to_string(opts.factor) + "(factor)") +
            " iters: " + (opts.iters ? std::to_string(opts.iters) : std::string("by size (5..200)")) +
            " validation: " + (opts.check ? "1" : "0"),
        "# time = mean over iterations of the slowest rank's time; algbw = bytes/time/1e9; "
        "busbw = algbw*2(K-1)/K; r0 sent = bytes rank 0 sent, counted for ring/star (native, nccl: a ring's, modelled)",
        std::string("# rank 0 on ") + host + ", pid " + std::to_string(getpid()) + ", " +
            std::to_string(cores) + " core(s) for the " + std::to_string(env.local_size()) + " rank(s) on its node",
        "# heap policy " + env.heap_policy() + " (comm/heap_policy.h)"};
    if (env.local_size() > cores) {
      banner.push_back("# WARNING: oversubscribed: " + std::to_string(env.local_size()) + " ranks share " +
                       std::to_string(cores) + " core(s) on this node; ranks time-slice, so times include "
                       "waiting for a core (see bench/README.md)");
    }
    if (opts.link.enabled()) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "# LINK EMULATION %s (alpha %.1f us, beta %.2f GB/s): each all-reduce held until its own "
                    "pattern's modelled time (ring 2(K-1)(a+B/K/b), star 2(K-1)(a+B/b)) has passed",
                    opts.link.name.c_str(), opts.link.alpha_us, opts.link.gbps);
      banner.push_back(line);
    }
    if (!nccl_note.empty()) banner.push_back("# " + nccl_note);
    table.print(format == "console" ? stdout : stderr, banner);
    if (!predictions.empty()) {
      print_predictions(format == "console" ? stdout : stderr, opts.predict, shape, predictions);
    }
  }
  MPI_CHECK(MPI_Comm_free(&comm));
  benchmark::Shutdown();
  return ctx.wrong_total > 0 ? 1 : 0;
}

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  std::unique_ptr<MpiEnv> env;
  try {
    env = std::make_unique<MpiEnv>(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce: %s\n", e.what());
    return 1;
  }
  try {
    return bench::run(argc, argv, *env);
  } catch (const InputError& e) {
    // Options are the same on every rank, so every rank gets here: no abort needed.
    if (env->rank() == 0) std::fprintf(stderr, "bench_allreduce: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce: rank %d: error: %s\n", env->rank(), e.what());
    env->abort(1);  // a peer may be waiting inside a collective: end the whole job
  }
}
