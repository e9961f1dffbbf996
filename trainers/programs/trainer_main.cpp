// trainer_main.cpp — the flow described in trainer_main.h.
#include "trainer_main.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include "comm/world.h"
#include "core/errors.h"
#include "models/gemm/gemm_probe.h"
#include "models/gpu_uuid.h"
#include "models/io/safetensors.h"
#include "trainers/diagnosis/run_diagnosis.h"
#include "trainers/diagnosis/step_probe.h"
#include "trainers/diagnosis/trace.h"
#include "trainers/gpu_choice.h"
#include "trainers/placement.h"
#include "trainers/rank_setup.h"
#include "trainers/record_builder.h"
#include "trainers/replica_check.h"
#include "trainers/sync_factory.h"
#include "trainers/train_loop.h"

namespace dpscale {

namespace {

void print_banner(const RankSetup& s, const std::string& comm_desc) {
  const TrainOptions& o = s.opts;
  std::cerr << "# " << mode_info(o.mode).executable << "\n"
            << "#   model      " << s.spec.describe() << "\n"
            << "#   device     " << backend_name(s.device->backend()) << ": " << s.device->name() << "\n";
  const GemmReport gemm = s.device->gemm_report();
  if (!gemm.info.library.empty()) {
    std::cerr << "#   gemm       " << gemm.info.library << " (" << gemm.info.kernel << ", " << gemm.info.threads
              << " thread" << (gemm.info.threads == 1 ? "" : "s")
              << (gemm.info.pinned.empty() ? "" : ", kernels pinned by " + gemm.info.pinned) << "), " << gemm.choice
              << "\n";
    if (!gemm.passed_over.empty()) std::cerr << "#   passed over " << gemm.passed_over << "\n";
  }
  std::cerr
            << "#   data       " << s.data.kind << ", " << s.data.n << " samples, " << s.steps_per_epoch
            << " steps/epoch\n"
            << "#   batch      " << o.batch_size << " global = " << s.world_size << " x " << s.local_batch
            << (o.accum_steps > 1 ? ", " + std::to_string(o.accum_steps) + " micro-batches per step" : "") << "\n"
            << "#   training   " << o.epochs << " epochs, lr " << o.lr << ", warm-up " << o.warmup_steps << " steps"
            << (o.max_steps ? ", max " + std::to_string(o.max_steps) + " steps" : "") << "\n";
  if (!comm_desc.empty()) std::cerr << "#   comm       " << comm_desc << "\n";
  std::cerr.flush();
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

// What each rank tells the others after setting itself up.
struct StartupReport {
  int code;  // 0 ok, 2 bad input, 1 internal error
  uint64_t checksum;
  uint64_t fingerprint;
};

// Step 2: every rank learns the same thing; returns the exit status when the job must stop.
std::optional<int> startup_check(World& world, const StartupReport& mine, const std::string& error,
                                 const char* exe) {
  const std::vector<StartupReport> all = world.all_gather(mine);
  const int rank = world.rank();
  for (int r = 0; r < world.size(); ++r) {
    if (all[static_cast<size_t>(r)].code != 0) {
      if (r == rank) std::cerr << exe << (r != 0 ? " (rank " + std::to_string(r) + ")" : "") << ": " << error << std::endl;
      return all[static_cast<size_t>(r)].code;
    }
  }
  for (int r = 1; r < world.size(); ++r) {
    if (all[static_cast<size_t>(r)].checksum != all[0].checksum) {
      if (rank == 0) {
        std::cerr << exe << ": replica weights differ at start-up: rank " << r << " has checksum " << std::hex
                  << all[static_cast<size_t>(r)].checksum << ", rank 0 has " << all[0].checksum << std::dec
                  << " (every rank must use the same --seed or --init)" << std::endl;
      }
      return 2;
    }
    if (all[static_cast<size_t>(r)].fingerprint != all[0].fingerprint) {
      if (rank == 0) std::cerr << exe << ": rank " << r << " was launched with different options from rank 0" << std::endl;
      return 2;
    }
  }
  return std::nullopt;
}

// Which GPU this rank takes: every local rank's visible GPU UUIDs, gathered over the node, and
// the one assignment every rank computes from them (gpu_choice.h). Collective over the node; a
// rank that cannot list its GPUs takes part with none, so the collective never goes unanswered.
void choose_node_gpu(World& world, RankPlace& place, bool share) {
  constexpr int kMaxGpus = 64;
  struct Visible {
    int32_t n = 0;
    GpuUuid uuid[kMaxGpus] = {};
  } mine;
  try {
    const std::vector<GpuUuid> uuids = cuda_gpu_uuids();
    mine.n = static_cast<int32_t>(std::min<size_t>(uuids.size(), kMaxGpus));
    std::copy(uuids.begin(), uuids.begin() + mine.n, mine.uuid);
  } catch (const std::exception&) {
    mine.n = 0;  // make_device then says what is wrong with this rank's GPUs
  }
  const std::vector<Visible> all = world.node_all_gather(mine);
  std::vector<std::vector<GpuUuid>> visible;
  for (const Visible& v : all) visible.emplace_back(v.uuid, v.uuid + v.n);
  const GpuChoice c = choose_gpu(visible, place.local_rank, share);
  place.gpu_index = c.device_index;
  place.gpu_conflict = c.conflict;
  place.gpu_most_on_one = c.most_on_one_gpu;
}

// --link-dilation auto:TFLOPS: one F for all ranks, from the fastest rank's rate. The ranks probe
// at the same time, as they compute in training, and a rank slowed by a passing disturbance
// should not inflate every modelled link time of the run.
LinkModel resolve_link(RankSetup& s, World& world) {
  LinkModel link = s.link;
  if (link.enabled() && s.dilation.auto_tflops > 0) {
    const double fastest = world.max_over_ranks(measure_model_gemm_flops(*s.device, s.spec, s.local_batch));
    link.dilation = s.dilation.auto_tflops * 1e12 / fastest;
  }
  return link;
}

std::string describe_comm(const RecordContext& ctx, const World& world, const TrainOptions& o) {
  if (!mode_info(o.mode).data_parallel) return "";
  std::ostringstream desc;
  desc << ctx.comm << " (" << ctx.allreduce << (o.grad_comm != "fp32" ? ", " + o.grad_comm + " gradients" : "")
       << "), " << world.size() << " ranks on " << world.n_nodes() << " node(s)";
  if (ctx.link.enabled()) {
    desc << ", link " << o.link << " (" << ctx.link.alpha_us << " us, " << ctx.link.gbps << " GB/s) x"
         << std::setprecision(4) << ctx.link.dilation << " dilation";
  }
  return desc.str();
}

// Test hook, inert unless DPSCALE_TEST_CORRUPT_WEIGHTS_RANK names this rank: that rank moves its
// first weight by one ulp after training, just before the replica check, so that a test can run
// the disagreement path (one line, replicas_agree false, no checkpoint, exit 1) through the real
// trainers. Replicas agree by construction, so nothing else can make them differ on demand.
void corrupt_weights_for_test(RankSetup& s, int rank) {
  const char* v = std::getenv("DPSCALE_TEST_CORRUPT_WEIGHTS_RANK");
  if (!v || std::to_string(rank) != v) return;
  std::vector<float> w = s.model->params_to_host();
  if (w.empty()) return;
  w[0] = std::nextafter(w[0], std::numeric_limits<float>::infinity());
  s.model->params_from_host(w);
}

// Step 3, after the ranks agreed: communicate, train, report. Returns the exit status.
int train_and_report(RankSetup& s, World& world, const std::string& timestamp, const char* exe) {
  const TrainOptions& o = s.opts;
  RecordContext ctx;
  ctx.setup = &s;
  ctx.link = resolve_link(s, world);
  std::unique_ptr<Communicator> comm = world.make_communicator(*s.device, s.algo, ctx.link);
  auto sync = make_grad_sync(o, *s.model, comm.get());  // sets the communicator's wire format too
  ctx.sync = sync->report();
  if (comm) {
    ctx.comm = comm->name();
    ctx.allreduce = comm->name() == "nccl" ? "nccl" : allreduce_algo_name(s.algo);
  } else {
    ctx.link = LinkModel{};  // a world of one has no link
  }
  ctx.n_nodes = world.n_nodes();
  // Collective: any node whose GPU two ranks shared makes the run a shared one.
  ctx.gpu_shared = world.max_over_ranks(static_cast<double>(s.gpu_most_on_one)) > 1.0;
  const RankPlacement placement = gather_placement(world);
  ctx.ranks_per_node = placement.ranks_per_node;
  ctx.nodes = placement.nodes;
  ctx.mpi_library = world.library_version();
  ctx.nccl_version = comm ? nccl_version() : "";
  ctx.timestamp = timestamp;
  if (world.rank() == 0) print_banner(s, describe_comm(ctx, world, o));

  // The diagnosis: the timed steps' instruments, the trace, and what follows the epochs (triad, gathering)
  std::unique_ptr<Tracer> tracer = make_tracer(s);
  StepProbe probe(s, *sync, comm.get(), tracer.get());

  std::vector<EpochStats> epochs;
  try {
    epochs = run_training(s, *sync, comm.get(), world, &probe);
  } catch (const InputError& e) {
    // A non-finite global loss: every rank sees it at the same step.
    if (comm) comm->finish();
    if (world.rank() == 0) std::cerr << exe << ": " << e.what() << std::endl;
    return 2;
  }
  const PerRankEpochs all = world.gather_to_root(epochs);
  const DiagnosisData diag = finish_diagnosis(s, *sync, comm.get(), world, probe, tracer.get());
  ctx.sync = sync->report();  // again: stage 3 counts what it gathered and held as it trained
  sync->end_training();       // a stage-3 rank holds its shards: every parameter whole again
  // The end-of-run replica check (replica_check.h): every rank learns the verdict.
  std::string disagreement;
  if (comm) {
    corrupt_weights_for_test(s, world.rank());
    const std::vector<uint64_t> sums = world.all_gather(checksum_floats(s.model->params_to_host()));
    const ReplicaVerdict v = compare_replicas(sums);
    ctx.replicas_agree = v.agree;
    disagreement = describe_disagreement(v, sums);
  }
  if (world.rank() == 0) {
    const auto acc = evaluate_test_accuracy(s);
    // Replicas that disagree are not one model: no checkpoint of either.
    if (!o.save_path.empty() && disagreement.empty()) {
      save_checkpoint(o.save_path, s.model->layout(), s.model->params_to_host(), s.spec.checkpoint_metadata());
    }
    RunRecord record = build_record(ctx, all, acc);
    fill_diagnosis(record, diag, all, s);
    std::cout << format_results_line(record) << std::endl;
    if (!disagreement.empty()) std::cerr << exe << ": " << disagreement << std::endl;
  }
  world.barrier();  // no rank finalizes while rank 0 still reports
  return disagreement.empty() ? 0 : 1;
}

}  // namespace

int run_trainer(int argc, char** argv, Mode mode) {
  const ModeInfo& info = mode_info(mode);
  const char* exe = info.executable;
  if (wants_help(argc, argv)) {
    const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
    if (r && std::strcmp(r, "0") != 0) return 0;  // under mpirun, one copy of the help is enough
    TrainOptions o;
    try {
      parse_options(argc, argv, mode, o);
    } catch (const InputError& e) {
      std::cerr << exe << ": " << e.what() << std::endl;
      return 2;
    }
    return 0;
  }
  if (info.data_parallel && !launched_by_mpi()) {
    // The options first: a bad one is named before the launch is, so a mistyped command learns
    // everything that is wrong with it without starting MPI.
    TrainOptions o;
    try {
      parse_options(argc, argv, mode, o);
    } catch (const InputError& e) {
      std::cerr << exe << ": " << e.what() << std::endl;
      return 2;
    }
    std::cerr << exe << ": must be launched by mpirun, one rank per device (e.g. mpirun -np 2 " << exe
              << " ...); for one device use train_single_gpu" << std::endl;
    return 2;
  }
  std::unique_ptr<World> world;
  try {
    world = info.data_parallel ? make_mpi_world(&argc, &argv) : make_single_world();
  } catch (const std::exception& e) {
    std::cerr << exe << ": " << e.what() << std::endl;
    return 1;
  }

  // --- 1. local set-up, no collectives ---
  std::unique_ptr<RankSetup> s;
  StartupReport mine{0, 0, 0};
  std::string error;
  const std::string timestamp = utc_now();
  try {
    TrainOptions o;
    parse_options(argc, argv, mode, o);
    world->set_collective_timeout(o.collective_timeout_s);  // the start-up check is watched too
    RankPlace place;
    place.rank = world->rank();
    place.world_size = world->size();
    place.local_rank = world->local_rank();
    place.local_size = world->local_size();
    // Options parse alike on every rank (one argv), so either all ranks gather here or none do.
    if (info.data_parallel && cuda_compiled() && o.device.backend != "cpu") choose_node_gpu(*world, place, o.share_gpu);
    s = set_up_rank(o, place);
    mine.checksum = checksum_floats(s->model->params_to_host());
    mine.fingerprint = options_fingerprint(o);
  } catch (const InputError& e) {
    mine.code = 2;
    error = e.what();
  } catch (const std::exception& e) {
    mine.code = 1;
    error = std::string("error: ") + e.what();
  }

  // --- 2. the start-up check ---
  if (auto stop = startup_check(*world, mine, error, exe)) return *stop;

  // --- 3. communicate and train ---
  try {
    return train_and_report(*s, *world, timestamp, exe);
  } catch (const InputError& e) {
    // Bad input found late (a --save that fails to write): this rank's line, then the whole job.
    std::cerr << exe << (world->size() > 1 ? " (rank " + std::to_string(world->rank()) + ")" : "") << ": "
              << e.what() << std::endl;
    return world->end_job(2);
  } catch (const std::exception& e) {
    std::cerr << exe << (world->size() > 1 ? " (rank " + std::to_string(world->rank()) + ")" : "") << ": error: "
              << e.what() << std::endl;
    return world->end_job(1);
  }
}

}  // namespace dpscale
