// trainer_main.cpp — the flow described in trainer_main.h.
#include "trainer_main.h"

#include <mpi.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "comm/communicator_factory.h"
#include "comm/mpi_check.h"
#include "comm/mpi_env.h"
#include "gemm_probe.h"
#include "grad_sync.h"
#include "models/errors.h"
#include "models/io/safetensors.h"
#include "record_builder.h"
#include "session.h"
#include "train_loop.h"

namespace dpscale {

namespace {

// --save must be writable: find out before training, not after.
void check_save_path(const TrainOptions& o) {
  if (o.save_path.empty()) return;
  std::filesystem::path dir = std::filesystem::path(o.save_path).parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir)) {
    throw InputError("--save: directory '" + dir.string() + "' does not exist");
  }
  // A directory in the way would only fail the final rename, after the whole training run.
  if (std::filesystem::is_directory(o.save_path)) {
    throw InputError("--save: '" + o.save_path + "' is a directory");
  }
}

void print_banner(const Session& s, const std::string& comm_desc) {
  const TrainOptions& o = s.opts;
  std::cerr << "# " << executable_name(o.mode) << "\n"
            << "#   model      " << s.spec.name << " [" << widths_to_string(s.spec.widths) << "], "
            << s.spec.n_params() << " params\n"
            << "#   device     " << backend_name(s.device->backend()) << ": " << s.device->name() << "\n"
            << "#   data       " << s.data.kind << ", " << s.data.n << " samples, " << s.steps_per_epoch
            << " steps/epoch\n"
            << "#   batch      " << o.batch_size << " global = " << s.world_size << " x " << s.local_batch << "\n"
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

int run_single(int argc, char** argv) {
  const char* exe = executable_name(Mode::single);
  try {
    TrainOptions o;
    if (!parse_options(argc, argv, Mode::single, o)) return 0;
    check_save_path(o);
    const std::string timestamp = utc_timestamp();
    auto s = prepare_session(o, 0, 1, 0);
    print_banner(*s, "");
    auto sync = make_grad_sync(o, *s->model, nullptr);
    GatheredStats stats{{run_training(*s, *sync, nullptr, {})}};
    const auto acc = evaluate_test_accuracy(*s);
    if (!o.save_path.empty()) save_checkpoint(o.save_path, s->spec, s->model->layout(), s->model->params_to_host());
    RecordContext ctx;
    ctx.session = s.get();
    ctx.sync = sync->stats();
    ctx.timestamp = timestamp;
    std::cout << format_results_line(build_record(ctx, stats, acc)) << std::endl;
    return 0;
  } catch (const InputError& e) {
    std::cerr << exe << ": " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << exe << ": error: " << e.what() << std::endl;
    return 1;
  }
}

// Per rank, flattened for MPI: 6 doubles per epoch.
std::vector<double> flatten(const std::vector<EpochStats>& epochs) {
  std::vector<double> v;
  for (const EpochStats& e : epochs) {
    v.insert(v.end(), {e.time_s, e.wait_s, e.busy_s, e.loss_global, e.loss_local, static_cast<double>(e.steps)});
  }
  return v;
}

GatheredStats gather_stats(const std::vector<EpochStats>& mine, int world_size) {
  const std::vector<double> send = flatten(mine);
  std::vector<double> recv(send.size() * static_cast<size_t>(world_size));
  // Every rank ran the same number of epochs: each step is a collective they all took.
  MPI_CHECK(MPI_Gather(send.data(), static_cast<int>(send.size()), MPI_DOUBLE, recv.data(),
                       static_cast<int>(send.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD));
  GatheredStats g;
  const size_t n = mine.size();
  for (int r = 0; r < world_size; ++r) {
    std::vector<EpochStats> epochs(n);
    for (size_t e = 0; e < n; ++e) {
      const double* p = recv.data() + (static_cast<size_t>(r) * n + e) * 6;
      epochs[e] = EpochStats{p[0], p[1], p[2], p[3], p[4], static_cast<int64_t>(p[5])};
    }
    g.per_rank.push_back(std::move(epochs));
  }
  return g;
}

struct StartupReport {
  int code;  // 0 ok, 2 bad input, 1 internal error
  uint64_t checksum;
  uint64_t fingerprint;
};

int run_data_parallel(int argc, char** argv, Mode mode) {
  const char* exe = executable_name(mode);
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
  if (!MpiEnv::launched_by_mpi()) {
    std::cerr << exe << ": must be launched by mpirun, one rank per device (e.g. mpirun -np 2 " << exe
              << " ...); for one device use train_single_gpu" << std::endl;
    return 2;
  }
  std::unique_ptr<MpiEnv> env;
  try {
    env = std::make_unique<MpiEnv>(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << exe << ": " << e.what() << std::endl;
    return 1;
  }
  const int rank = env->rank(), world = env->world_size();

  // --- 1. local set-up, no collectives ---
  TrainOptions o;
  std::unique_ptr<Session> s;
  StartupReport mine{0, 0, 0};
  std::string error;
  const std::string timestamp = utc_timestamp();
  try {
    parse_options(argc, argv, mode, o);
    check_save_path(o);
    s = prepare_session(o, rank, world, env->local_rank());
    mine.checksum = checksum_floats(s->model->params_to_host());
    mine.fingerprint = options_fingerprint(o);
  } catch (const InputError& e) {
    mine.code = 2;
    error = e.what();
  } catch (const std::exception& e) {
    mine.code = 1;
    error = std::string("error: ") + e.what();
  }

  // --- 2. the start-up check: one all-gather, then everyone knows the same thing ---
  std::vector<StartupReport> all(static_cast<size_t>(world));
  MPI_CHECK(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD));
  for (int r = 0; r < world; ++r) {
    if (all[static_cast<size_t>(r)].code != 0) {
      if (r == rank) std::cerr << exe << (world > 1 && r != 0 ? " (rank " + std::to_string(r) + ")" : "") << ": " << error << std::endl;
      return all[static_cast<size_t>(r)].code;
    }
  }
  for (int r = 1; r < world; ++r) {
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

  // --- 3. communicate and train ---
  try {
    LinkModel link = s->link;
    if (link.enabled() && s->dilation.auto_tflops > 0) {
      // One F for all ranks, from the fastest rank's rate: the ranks probe at the same time, as
      // they compute in training, and a rank slowed by a passing disturbance should not
      // inflate every modelled link time of the run.
      double rate = measure_gemm_flops(*s->device, s->spec, s->local_batch), fastest = 0.0;
      MPI_CHECK(MPI_Allreduce(&rate, &fastest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
      link.dilation = s->dilation.auto_tflops * 1e12 / fastest;
    }
    const AllreduceAlgo algo = s->algo;
    std::unique_ptr<Communicator> comm = make_communicator(*s->device, MPI_COMM_WORLD, algo, link);
    auto sync = make_grad_sync(o, *s->model, comm.get());

    RecordContext ctx;
    ctx.session = s.get();
    ctx.sync = sync->stats();
    ctx.comm = comm->name();
    ctx.allreduce = comm->name() == "nccl" ? "nccl" : allreduce_algo_name(algo);
    ctx.link = link;
    ctx.n_nodes = env->n_nodes();
    ctx.mpi_library = env->library_version();
    ctx.nccl_version = nccl_version();
    ctx.timestamp = timestamp;
    if (rank == 0) {
      std::ostringstream desc;
      desc << ctx.comm << " (" << ctx.allreduce << "), " << world << " ranks on " << env->n_nodes() << " node(s)";
      if (link.enabled()) {
        desc << ", link " << o.link << " (" << link.alpha_us << " us, " << link.gbps << " GB/s) x" << std::setprecision(4)
             << link.dilation << " dilation";
      }
      print_banner(*s, desc.str());
    }

    std::vector<EpochStats> epochs;
    try {
      epochs = run_training(*s, *sync, comm.get(), [] { MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); });
    } catch (const InputError& e) {
      // A non-finite global loss: every rank sees it at the same step.
      comm->finish();
      if (rank == 0) std::cerr << exe << ": " << e.what() << std::endl;
      return 2;
    }
    const GatheredStats stats = gather_stats(epochs, world);
    if (rank == 0) {
      const auto acc = evaluate_test_accuracy(*s);
      if (!o.save_path.empty()) save_checkpoint(o.save_path, s->spec, s->model->layout(), s->model->params_to_host());
      std::cout << format_results_line(build_record(ctx, stats, acc)) << std::endl;
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));  // no rank finalizes while rank 0 still reports
    return 0;
  } catch (const std::exception& e) {
    std::cerr << exe << " (rank " << rank << "): error: " << e.what() << std::endl;
    env->abort(1);
  }
}

}  // namespace

int run_trainer(int argc, char** argv, Mode mode) {
  if (mode == Mode::single) return run_single(argc, argv);
  return run_data_parallel(argc, argv, mode);
}

}  // namespace dpscale
