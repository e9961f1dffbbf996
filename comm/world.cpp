// world.cpp — the world of one and the MPI world.
#include "world.h"

#include <mpi.h>

#include "communicator_factory.h"
#include "contract/trainer_options.h"
#include "mpi_check.h"
#include "mpi_env.h"
#include "watchdog.h"

namespace dpscale {

namespace {

class SingleWorld final : public World {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int n_nodes() const override { return 1; }
  std::string library_version() const override { return ""; }
  void barrier() override {}
  double max_over_ranks(double v) override { return v; }
  std::vector<unsigned char> all_gather_bytes(const void* mine, size_t nbytes) override { return copy(mine, nbytes); }
  std::vector<unsigned char> node_all_gather_bytes(const void* mine, size_t nbytes) override {
    return copy(mine, nbytes);
  }
  std::vector<unsigned char> gather_bytes_to_root(const void* mine, size_t nbytes) override {
    return copy(mine, nbytes);
  }
  std::unique_ptr<Communicator> make_communicator(Device&, AllreduceAlgo, const LinkModel&) override {
    return nullptr;
  }
  int end_job(int code) override { return code; }

 private:
  static std::vector<unsigned char> copy(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    return std::vector<unsigned char>(b, b + n);
  }
};

class MpiWorld final : public World {
 public:
  MpiWorld(int* argc, char*** argv)
      : env_(argc, argv), watchdog_(MPI_COMM_WORLD, TrainOptions{}.collective_timeout_s) {}

  int rank() const override { return env_.rank(); }
  int size() const override { return env_.world_size(); }
  int local_rank() const override { return env_.local_rank(); }
  int local_size() const override { return env_.local_size(); }
  int n_nodes() const override { return env_.n_nodes(); }
  std::string library_version() const override { return env_.library_version(); }

  // Each collective non-blocking, then waited for through the watchdog (watchdog.h): polled,
  // and ended with a named line when a rank never arrives.
  void barrier() override {
    MPI_Request r;
    MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
    wait(r, "barrier");
  }
  double max_over_ranks(double v) override {
    double out = 0.0;
    MPI_Request r;
    MPI_CHECK(MPI_Iallreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &r));
    wait(r, "max over ranks");
    return out;
  }
  std::vector<unsigned char> all_gather_bytes(const void* mine, size_t nbytes) override {
    std::vector<unsigned char> all(nbytes * static_cast<size_t>(size()));
    MPI_Request r;
    MPI_CHECK(MPI_Iallgather(mine, static_cast<int>(nbytes), MPI_BYTE, all.data(), static_cast<int>(nbytes), MPI_BYTE,
                             MPI_COMM_WORLD, &r));
    wait(r, "all-gather");
    return all;
  }
  std::vector<unsigned char> node_all_gather_bytes(const void* mine, size_t nbytes) override {
    std::vector<unsigned char> all(nbytes * static_cast<size_t>(local_size()));
    MPI_Request r;
    MPI_CHECK(MPI_Iallgather(mine, static_cast<int>(nbytes), MPI_BYTE, all.data(), static_cast<int>(nbytes), MPI_BYTE,
                             env_.node_comm(), &r));
    wait(r, "node all-gather");
    return all;
  }
  std::vector<unsigned char> gather_bytes_to_root(const void* mine, size_t nbytes) override {
    std::vector<unsigned char> all(rank() == 0 ? nbytes * static_cast<size_t>(size()) : 0);
    MPI_Request r;
    MPI_CHECK(MPI_Igather(mine, static_cast<int>(nbytes), MPI_BYTE, all.data(), static_cast<int>(nbytes), MPI_BYTE, 0,
                          MPI_COMM_WORLD, &r));
    wait(r, "gather to rank 0");
    return all;
  }
  std::unique_ptr<Communicator> make_communicator(Device& device, AllreduceAlgo algo, const LinkModel& link) override {
    return dpscale::make_communicator(device, MPI_COMM_WORLD, algo, link, &watchdog_);
  }
  int end_job(int code) override { env_.abort(code); }
  void set_collective_timeout(double seconds) override { watchdog_.set_timeout(seconds); }

 private:
  void wait(MPI_Request& r, const char* what) {
    const uint64_t seq = ++seq_;
    WaitScope scope(WaitContext{&watchdog_, Channel::world, seq,
                                [what, seq] { return std::string(what) + " (world collective #" + std::to_string(seq) + ")"; },
                                {}, false});
    mpi_wait_all(1, &r);
  }

  MpiEnv env_;
  CollectiveWatchdog watchdog_;  // destroyed before env_ finalizes MPI
  uint64_t seq_ = 0;             // the World's collectives, the same sequence on every rank
};

}  // namespace

std::unique_ptr<World> make_single_world() { return std::make_unique<SingleWorld>(); }
std::unique_ptr<World> make_mpi_world(int* argc, char*** argv) { return std::make_unique<MpiWorld>(argc, argv); }
bool launched_by_mpi() { return MpiEnv::launched_by_mpi(); }

}  // namespace dpscale
