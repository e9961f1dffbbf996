// watchdog_fires.cpp — an MPI program in which the collective watchdog must fire: rank 1 never
// joins, and rank 0 waits for it on two threads at once (the MpiCommunicator's comm thread in a
// gradient all-reduce, the main thread in a World-channel barrier), both ticking the one
// CollectiveWatchdog. After its timeout the watchdog names rank 1 and ends the job.
//
// CTest (tests/comm/CMakeLists.txt: comm.watchdog.fires) passes it when the output holds the
// watchdog's line naming rank 1 and no sanitizer report; scripts/sanitize.sh tsan runs it under
// ThreadSanitizer, so the heartbeat and timeout paths — the only code where the comm thread and
// the main thread share the watchdog's state — run under TSan, not only the happy path.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_check.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_env.h"
#include "comm/watchdog.h"
#include "contract/link_model.h"

int main(int argc, char** argv) {
  using namespace dpscale;
  MpiEnv env(&argc, &argv);
  if (env.world_size() != 2) {
    if (env.rank() == 0) std::fprintf(stderr, "watchdog_fires: run with mpirun -np 2\n");
    return 2;
  }
  // 1 s timeout (+ the watchdog's grace second): long enough for heartbeats to flow, short for CI.
  CollectiveWatchdog watchdog(MPI_COMM_WORLD, 1.0);
  MpiCommunicator comm(MPI_COMM_WORLD, AllreduceAlgo::ring, LinkModel{}, &watchdog);

  if (env.rank() == 1) {
    // Never arrives: sleeps far past rank 0's timeout; MPI_Abort on rank 0 ends it.
    std::this_thread::sleep_for(std::chrono::seconds(60));
    std::fprintf(stderr, "watchdog_fires: rank 1 outlived the job; the watchdog did not end it\n");
    return 1;
  }

  std::vector<float> grads(4096, 1.0f);
  auto work = comm.allreduce_sum(grads.data(), grads.size());  // the comm thread waits on rank 1

  // The main thread's wait: a request that never completes (a receive rank 1 never sends),
  // polled under the same watchdog on the World channel.
  int never = 0;
  MPI_Request req;
  MPI_CHECK(MPI_Irecv(&never, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &req));
  {
    WaitScope scope(WaitContext{&watchdog, Channel::world, 1, [] { return std::string("the test's barrier"); }, {}, false});
    mpi_wait_all(1, &req);
  }
  work->wait();
  std::fprintf(stderr, "watchdog_fires: rank 0's waits returned; the watchdog did not fire\n");
  return 1;
}
