// world.h — the ranks a trainer runs among: a world of one (train_single_gpu, no MPI) or the K
// ranks mpirun launched. The trainers run one flow over this interface and make no MPI calls
// of their own; the gradient all-reduces go through the Communicator the world makes.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "communicator.h"
#include "contract/link_model.h"
#include "models/device.h"

namespace dpscale {

class World {
 public:
  virtual ~World() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // rank among this node's ranks: which GPU it takes
  virtual int local_size() const = 0;  // ranks on this node
  virtual int n_nodes() const = 0;
  virtual std::string library_version() const = 0;  // MPI library's first line; "" for one rank

  virtual void barrier() = 0;
  virtual double max_over_ranks(double v) = 0;
  // Every rank's bytes, in rank order, on every rank (every rank passes the same nbytes).
  virtual std::vector<unsigned char> all_gather_bytes(const void* mine, size_t nbytes) = 0;
  // Every rank of this node's bytes, in local-rank order, on each of them (every rank of the
  // world calls it; each node gathers among its own ranks).
  virtual std::vector<unsigned char> node_all_gather_bytes(const void* mine, size_t nbytes) = 0;
  // Rank 0 receives every rank's bytes in rank order; the others receive nothing.
  virtual std::vector<unsigned char> gather_bytes_to_root(const void* mine, size_t nbytes) = 0;

  // The communicator of the gradient sync: NCCL for a CUDA device, MPI (with link emulation
  // and the chosen algorithm) for the CPU; nullptr in a world of one. Collective.
  virtual std::unique_ptr<Communicator> make_communicator(Device& device, AllreduceAlgo algo,
                                                          const LinkModel& link) = 0;

  // Ends the job after a failure past the start-up check: every rank of an MPI job (MPI_Abort,
  // so no peer waits in a collective), or, in a world of one, returns `code` for main to return.
  virtual int end_job(int code) = 0;

  // --collective-timeout: every collective of this world and of its communicator that waits
  // longer ends the job naming itself and the ranks that have not arrived (watchdog.h). Until set,
  // the option table's default. A world of one has nothing to wait for.
  virtual void set_collective_timeout(double seconds) {}

  template <class T>
  std::vector<T> all_gather(const T& mine) {
    static_assert(std::is_trivially_copyable_v<T>);
    return unpack<T>(all_gather_bytes(&mine, sizeof(T)));
  }
  template <class T>
  std::vector<T> node_all_gather(const T& mine) {
    static_assert(std::is_trivially_copyable_v<T>);
    return unpack<T>(node_all_gather_bytes(&mine, sizeof(T)));
  }
  // Rank 0 gets every rank's vector (all of the same length), the others an empty result.
  template <class T>
  std::vector<std::vector<T>> gather_to_root(const std::vector<T>& mine) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::vector<T> all = unpack<T>(gather_bytes_to_root(mine.data(), mine.size() * sizeof(T)));
    std::vector<std::vector<T>> per_rank;
    if (rank() != 0) return per_rank;
    for (int r = 0; r < size(); ++r) {
      const auto at = static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * mine.size());
      per_rank.emplace_back(all.begin() + at, all.begin() + at + static_cast<std::ptrdiff_t>(mine.size()));
    }
    return per_rank;
  }

 private:
  template <class T>
  static std::vector<T> unpack(const std::vector<unsigned char>& bytes) {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

std::unique_ptr<World> make_single_world();
// MPI_Init_thread(MULTIPLE) and the node topology; throws std::runtime_error if MPI cannot start.
std::unique_ptr<World> make_mpi_world(int* argc, char*** argv);
// True when a launcher (mpirun, PMIx, Hydra, Slurm's srun) started this process.
bool launched_by_mpi();

}  // namespace dpscale
