// allreduce_algos.cpp — dispatch and the native algorithm.
#include "allreduce_algos.h"

#include <algorithm>

#include "hier_allreduce.h"
#include "mpi_check.h"
#include "ring_allreduce.h"
#include "star_allreduce.h"
#include "watchdog.h"

namespace dpscale {

void allreduce_sum(AllreduceAlgo algo, void* data, size_t count, MPI_Datatype type, MPI_Comm comm) {
  switch (algo) {
    case AllreduceAlgo::ring: ring_allreduce_sum(data, count, type, comm); return;
    case AllreduceAlgo::star: star_allreduce_sum(data, count, type, comm); return;
    case AllreduceAlgo::hier: hier_allreduce_sum(data, count, type, comm); return;  // nodes as MPI sees them
    case AllreduceAlgo::native: {
      // MPI counts are int: reduce very large buffers in pieces.
      int type_size = 0;
      MPI_CHECK(MPI_Type_size(type, &type_size));
      for (size_t done = 0; done < count;) {
        const size_t piece = std::min(count - done, size_t{1} << 30);
        // Non-blocking, then polled (watchdog.h): a blocking MPI_Allreduce spins a core for as
        // long as a peer is late, and cannot be given up on.
        if (waits_block()) {
          MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * type_size,
                                  static_cast<int>(piece), type, MPI_SUM, comm));
          done += piece;
          continue;
        }
        MPI_Request req;
        MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * type_size,
                                 static_cast<int>(piece), type, MPI_SUM, comm, &req));
        mpi_wait_all(1, &req);
        done += piece;
      }
      return;
    }
  }
}

}  // namespace dpscale
