// bench_dp_loop.cpp — what the data-parallel loop costs at K = 1, against the single-device loop,
// in one process: every variant trains the same model, block after block, interleaved.
//
//   mpirun -np 1 bench_dp_loop [--backends=cuda] [--models=large,xlarge] [--batch=1024] [--steps=8]
//                              [--tf32] [--threads=1] [--benchmark_min_time=5] ...
//
// dp_loop/<backend>/<model>/batch:B[/tf32] — per iteration, one block of --steps training steps
// (the trainers' own train_step: forward, loss, backward with the strategy's sync, finish, the
// update with its finite check, the loss read) with each variant, the device drained before and
// after each block as an epoch is; the variants' order rotates one place each iteration, so a
// drift of the machine, or going first, hits every variant alike. The variants:
//   single          train_single_gpu's sync (none)
//   naive           train_dp_naive: every tensor's all-reduce after backward, queued as one batch
//   naive_logged    the same with the communicator's call log on every step: each call timed
//                   by an end event of its own (against naive: what that costs; the trainers
//                   keep the log one step in eight on a GPU, every step on the CPU, where the
//                   two are the same: call_log_sampling.h)
//   naive_per_call  the same calls queued one by one, each ordered after compute on its own
//                   (against naive: what the batch saves; on the CPU the two are the same)
//   naive_fused     train_dp_naive --fused: one all-reduce of the whole buffer
//   interleaved     train_dp_interleaved: each tensor's all-reduce launched from backward
//   bucketed        train_ddp_bucketed at the default cap
//   single_events   single with one event recorded on the compute stream per tensor as backward
//                   writes it — what interleaved's calls add to the compute stream, without
//                   any comm stream (on the CPU a clock read)
// Every DP variant keeps the call log on the steps the trainers would (call_log_sampling.h, counted
// from each block's first step: on a GPU one in eight at --steps=8, one a block at fewer), and the
// log is taken after each step, as the trainers do.
// At K = 1 no all-reduce moves a byte (NCCL's in-place sum on one rank is no operation; MPI's
// copies nothing), so what a variant takes over single is its loop's own cost: the ordering
// between streams (threads), the timing events, the waits. One process, so none of the
// process-to-process spread that comparing two trainer runs carries (on an H100 up to 27% between
// three runs of one `single`: docs/gpu/README.md).
// Without the trainers' step probe (its per-step reads and timers are the same in every mode).
// Manual time: the single block. Counters: <variant>_ms (a step, mean over the iterations) and,
// for each other variant, <variant>_speedup — the median over iterations of the same iteration's
// single block time over the variant's: its speedup at K = 1, as the report's against single
// (0.99: the variant's step is 1% longer; the trainers' goal is at least 0.99), with
// <variant>_speedup_lo and _hi, the median's 95% interval from the iterations' order statistics
// (bench_args.h): a goal met only where lo clears it.
//
// Runs in a world of one (mpirun -np 1, or alone): anything larger is refused. CUDA is skipped,
// saying why, where no GPU answers.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_args.h"
#include "comm/world.h"
#include "core/errors.h"
#include "core/median.h"
#include "models/device.h"
#include "trainers/diagnosis/call_log_sampling.h"
#include "trainers/rank_setup.h"
#include "trainers/sync_factory.h"
#include "trainers/train_loop.h"

namespace dpscale::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Naive's calls queued one by one, each ordered after compute on its own (Communicator's
// allreduce_sum), not as one batch: the other side of `naive`.
class NaivePerCallSync final : public GradSync {
 public:
  NaivePerCallSync(Model& model, Communicator& comm) : GradSync(model, &comm) {}
  void on_grad_ready(const FlatTensor&) override {}
  SyncStats stats() const override { return {}; }

 private:
  void complete() override {
    const ParamLayout& layout = model_.layout();
    for (const FlatTensor& t : layout.tensors()) {
      comm_->allreduce_sum(model_.grads() + t.offset, static_cast<size_t>(count_with_loss_slot(layout, t.index, t.count)));
    }
    comm_->finish();
  }
};

// Single's loop with one event recorded on the compute stream as each tensor's gradient is
// written, and nothing else: what interleaved's calls put on the compute stream (the event the
// comm stream waits on), without the comm stream. An interval timer whose start() is called
// again at each tensor: each call records the one start event again (cuda_timer.cu); it is
// never stopped or read. A timing event, where interleaved's are not (they only order the comm
// stream): if anything dearer, so its cost bounds theirs from above. On the CPU a clock read.
class EventPerTensorSync final : public GradSync {
 public:
  explicit EventPerTensorSync(Model& model) : GradSync(model, nullptr), events_(model.device().make_interval_timer()) {}
  void on_grad_ready(const FlatTensor&) override { events_->start(); }
  SyncStats stats() const override { return {}; }

 private:
  void complete() override {}
  std::unique_ptr<IntervalTimer> events_;
};

struct Variant {
  std::string name;
  std::unique_ptr<GradSync> sync;
  bool comm = false;              // its sync calls the communicator
  bool log_every_step = false;    // its call log kept on every step, whatever the device
};

// One model on one backend, with every variant's sync over the one communicator.
struct Loop {
  std::unique_ptr<RankSetup> setup;
  std::unique_ptr<Communicator> comm;
  std::vector<Variant> variants;  // single first
};

TrainOptions options_for(const std::string& backend, const std::string& model, int batch, int steps, bool tf32,
                         int threads) {
  std::vector<std::string> args = {"bench_dp_loop", "--backend", backend, "--model", model, "--batch-size",
                                   std::to_string(batch), "--samples", std::to_string(static_cast<int64_t>(batch) * steps),
                                   "--epochs", "1", "--threads", std::to_string(threads), "--quiet"};
  if (tf32) args.push_back("--tf32");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  TrainOptions o;
  parse_options(static_cast<int>(argv.size()), argv.data(), Mode::bucketed, o);
  return o;
}

// --samples is one block's rows, so an epoch (steps_per_epoch) is the block.
std::unique_ptr<Loop> make_loop(World& world, const TrainOptions& opts) {
  auto loop = std::make_unique<Loop>();
  loop->setup = set_up_rank(opts, RankPlace{});
  RankSetup& s = *loop->setup;
  loop->comm = world.make_communicator(*s.device, s.algo, s.link);
  auto sync_for = [&](Mode mode, bool fused) {
    TrainOptions o = opts;
    o.mode = mode;
    o.fused = fused;
    return make_grad_sync(o, *s.model, mode == Mode::single ? nullptr : loop->comm.get());
  };
  loop->variants.push_back({"single", sync_for(Mode::single, false)});
  loop->variants.push_back({"naive", sync_for(Mode::naive, false), true});
  loop->variants.push_back({"naive_logged", sync_for(Mode::naive, false), true, true});
  loop->variants.push_back({"naive_per_call", std::make_unique<NaivePerCallSync>(*s.model, *loop->comm), true});
  loop->variants.push_back({"naive_fused", sync_for(Mode::naive, true), true});
  loop->variants.push_back({"interleaved", sync_for(Mode::interleaved, false), true});
  loop->variants.push_back({"bucketed", sync_for(Mode::bucketed, false), true});
  loop->variants.push_back({"single_events", std::make_unique<EventPerTensorSync>(*s.model)});
  // The bench's own strategies update through the run's optimizer as make_grad_sync's do.
  for (Variant& v : loop->variants) {
    if (v.name == "naive_per_call" || v.name == "single_events") v.sync->use_optimizer(optimizer_config(opts));
  }
  warm_up(s, *loop->variants.front().sync);  // also allocates the optimizer's state
  return loop;
}

// One block of the loop's steps with the variant's sync, device drained at both ends; seconds.
// A DP variant's call log as the trainers' step probe keeps it (step_probe.cpp).
double run_block(Loop& loop, Variant& v) {
  RankSetup& s = *loop.setup;
  const bool every = v.log_every_step || call_log_every_step(s.device->host_visible(), false);
  if (v.comm && every) loop.comm->log_calls(true);  // before the clock: the trainers set it up front
  s.device->synchronize();
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < s.steps_per_epoch; ++i) {
    if (v.comm && !every) loop.comm->log_calls(call_log_on(i, false));
    const StepLosses l = train_step(s, *v.sync, i, true, checks_finite(s, i));
    if (v.comm) loop.comm->take_call_log();
    if (!std::isfinite(l.global) || l.nonfinite) throw InputError("the loss or a gradient became non-finite");
  }
  s.device->synchronize();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (v.comm) loop.comm->log_calls(false);
  return seconds;
}

void run_dp_loop(benchmark::State& st, Loop& loop) {
  const size_t n = loop.variants.size();
  for (Variant& v : loop.variants) run_block(loop, v);  // each sync's first block: untimed
  std::vector<double> sum(n, 0.0);
  std::vector<std::vector<double>> speedup(n);
  size_t iteration = 0;
  for (auto _ : st) {
    std::vector<double> block(n, 0.0);
    for (size_t k = 0; k < n; ++k) {
      const size_t v = (iteration + k) % n;
      block[v] = run_block(loop, loop.variants[v]);
    }
    for (size_t v = 0; v < n; ++v) {
      sum[v] += block[v];
      speedup[v].push_back(block[0] / block[v]);
    }
    st.SetIterationTime(block[0]);
    ++iteration;
  }
  if (iteration == 0) return;
  const double steps = static_cast<double>(iteration) * static_cast<double>(loop.setup->steps_per_epoch);
  for (size_t v = 0; v < n; ++v) {
    st.counters[loop.variants[v].name + "_ms"] = 1e3 * sum[v] / steps;
    if (v == 0) continue;
    const std::string& name = loop.variants[v].name;
    const MedianInterval ci = median_interval(speedup[v]);
    st.counters[name + "_speedup"] = median(speedup[v]);
    st.counters[name + "_speedup_lo"] = ci.lo;
    st.counters[name + "_speedup_hi"] = ci.hi;
  }
}

}  // namespace
}  // namespace dpscale::bench

int main(int argc, char** argv) {
  using namespace dpscale;
  using namespace dpscale::bench;
  return run_guarded("bench_dp_loop", [&] {
    int batch = 1024, threads = 1, steps = 8;
    const bool tf32 = take_switch(argc, argv, "--tf32");
    std::vector<std::string> models = {"large", "xlarge"}, backends = {"cuda"};
    if (auto v = take_flag(argc, argv, "--batch")) batch = static_cast<int>(parse_int(*v, "--batch", 1, 1 << 20));
    if (auto v = take_flag(argc, argv, "--threads")) threads = static_cast<int>(parse_int(*v, "--threads", 1, 1024));
    if (auto v = take_flag(argc, argv, "--steps")) steps = static_cast<int>(parse_int(*v, "--steps", 1, 100000));
    if (auto v = take_flag(argc, argv, "--models")) models = split_list(*v);
    if (auto v = take_flag(argc, argv, "--backends")) backends = split_list(*v);
    for (const std::string& b : backends) {
      if (b != "cpu" && b != "cuda") throw InputError("--backends: unknown backend '" + b + "' (use cpu, cuda)");
    }
    std::unique_ptr<World> world = make_mpi_world(&argc, &argv);
    if (world->size() != 1) {
      if (world->rank() != 0) return 2;  // one line for the job, from rank 0
      throw InputError("runs at K = 1 only (mpirun -np 1): " + std::to_string(world->size()) + " ranks were launched");
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    std::vector<std::unique_ptr<Loop>> loops;  // after the world: its communicators go first
    for (const std::string& b : backends) {
      if (b == "cuda" && !(cuda_compiled() && cuda_device_count() > 0)) {
        std::fprintf(stderr, "# bench_dp_loop: cuda skipped (%s)\n",
                     cuda_compiled() ? "no GPU answers" : "built without the CUDA backend");
        continue;
      }
      for (const std::string& m : models) {
        const bool with_tf32 = tf32 && b == "cuda";
        loops.push_back(make_loop(*world, options_for(b, m, batch, steps, with_tf32, threads)));
        Loop* loop = loops.back().get();
        if (b == "cuda" && m == models.front()) benchmark::AddCustomContext("cuda_device", loop->setup->device->name());
        const std::string name = "dp_loop/" + b + "/" + m + "/batch:" + std::to_string(batch) + (with_tf32 ? "/tf32" : "");
        benchmark::RegisterBenchmark(name.c_str(), [loop](benchmark::State& st) { run_dp_loop(st, *loop); })
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  });
}
