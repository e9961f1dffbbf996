// star_allreduce.cpp — the workshop's "naive way": every rank sends its whole buffer to rank 0,
// rank 0 sums them (in rank order) and sends the result back to each.
//
//        rank 1 ──┐            ┌──► rank 1
//        rank 2 ──┼──► rank 0 ─┼──► rank 2        rank 0's link carries 2(K-1) whole buffers;
//        rank 3 ──┘    (sum)   └──► rank 3        every other link carries 2.
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "star_allreduce.h"
#include "mpi_check.h"
#include "traffic.h"
#include "watchdog.h"

namespace dpscale {

namespace {

// Small and portable: the MPI standard only guarantees tags up to 32767 (see ring_allreduce.cpp).
constexpr int kStarTag = 7302;

// MPI_Send / MPI_Recv, waited for through the watchdog's polled wait (watchdog.h).
void send(const void* buf, int n, MPI_Datatype type, int dst, MPI_Comm comm) {
  MPI_Request r;
  MPI_CHECK(MPI_Isend(buf, n, type, dst, kStarTag, comm, &r));
  mpi_wait_all(1, &r);
}
void recv(void* buf, int n, MPI_Datatype type, int src, MPI_Comm comm) {
  MPI_Request r;
  MPI_CHECK(MPI_Irecv(buf, n, type, src, kStarTag, comm, &r));
  mpi_wait_all(1, &r);
}

template <class T>
void star_impl(T* data, size_t count, MPI_Datatype type, MPI_Comm comm) {
  int rank = 0, k = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &k));
  if (k == 1 || count == 0) return;
  if (count > static_cast<size_t>(INT_MAX)) throw std::runtime_error("star all-reduce: buffer too large for an MPI count");
  const int n = static_cast<int>(count);
  const size_t bytes = count * sizeof(T);
  if (rank == 0) {
    thread_local std::vector<T> incoming;
    if (incoming.size() < count) incoming.resize(count);
    for (int src = 1; src < k; ++src) {
      recv(incoming.data(), n, type, src, comm);
      count_traffic(0, bytes);
      for (size_t i = 0; i < count; ++i) data[i] += incoming[i];
    }
    for (int dst = 1; dst < k; ++dst) {
      send(data, n, type, dst, comm);
      count_traffic(bytes, 0);
    }
  } else {
    send(data, n, type, 0, comm);
    recv(data, n, type, 0, comm);
    count_traffic(bytes, bytes);
  }
}

}  // namespace

void star_allreduce_sum(void* data, size_t count, MPI_Datatype type, MPI_Comm comm) {
  if (type == MPI_FLOAT) return star_impl(static_cast<float*>(data), count, type, comm);
  if (type == MPI_DOUBLE) return star_impl(static_cast<double*>(data), count, type, comm);
  if (type == MPI_INT32_T || type == MPI_INT) return star_impl(static_cast<int32_t*>(data), count, type, comm);
  if (type == MPI_INT64_T || type == MPI_LONG_LONG) return star_impl(static_cast<int64_t*>(data), count, type, comm);
  throw std::invalid_argument("star all-reduce: unsupported MPI datatype");
}

}  // namespace dpscale
