// ring_allreduce.cpp — the ring all-reduce of the workshop ("How Ring AllReduce Actually Works"),
// over point-to-point messages.
//
//            ┌──────────────────────────────────────┐
//            ▼                                      │
//        rank 0 ──► rank 1 ──► rank 2 ──► ... ──► rank K-1
//
// The buffer is cut into K chunks (sizes differ by at most one element when K does not divide
// the count). Each step every rank sends one chunk to its right neighbour and receives one
// from its left, all at once, so every link is busy and none carries more than a chunk.
//   reduce-scatter, steps s = 0..K-2: send chunk (r - s) mod K, receive chunk (r - s - 1) mod K
//                  and add it into our own copy. Afterwards rank r holds the complete sum of
//                  chunk (r + 1) mod K.
//   all-gather,    steps s = 0..K-2: send chunk (r + 1 - s) mod K (complete), receive chunk
//                  (r - s) mod K and overwrite.
// Per rank: 2(K-1) messages of B/K bytes = 2(K-1)/K · B, which tends to 2B however large K is
// — the star's rank 0 instead moves 2(K-1) · B.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ring_allreduce.h"
#include "mpi_check.h"
#include "traffic.h"
#include "watchdog.h"

namespace dpscale {

namespace {

// The MPI standard only guarantees tags up to 32767 (MPI_TAG_UB); Open MPI's UCX PML, the one
// used on InfiniBand clusters, stops at 2^23 - 1. A tag like 0x52494E47 ("RING") works over
// shared memory (ob1, UB 2^31 - 1) and fails with MPI_ERR_TAG across nodes: stay small.
constexpr int kRingTag = 7301;

// MPI_Sendrecv, but waited for through the watchdog's polled wait (watchdog.h).
void sendrecv(const void* send, int send_n, void* recv, int recv_n, MPI_Datatype type, int right, int left,
              MPI_Comm comm) {
  MPI_Request r[2];
  MPI_CHECK(MPI_Irecv(recv, recv_n, type, left, kRingTag, comm, &r[0]));
  MPI_CHECK(MPI_Isend(send, send_n, type, right, kRingTag, comm, &r[1]));
  mpi_wait_all(2, r);
}

template <class T>
void ring_impl(T* data, size_t count, MPI_Datatype type, MPI_Comm comm) {
  int rank = 0, k = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &k));
  if (k == 1 || count == 0) return;

  const size_t base = count / k, extra = count % k;
  auto chunk_begin = [&](int c) { return c * base + std::min<size_t>(c, extra); };
  auto chunk_size = [&](int c) { return base + (static_cast<size_t>(c) < extra ? 1 : 0); };
  if (base + 1 > static_cast<size_t>(INT_MAX)) throw std::runtime_error("ring all-reduce: chunk too large for an MPI count");

  const int right = (rank + 1) % k, left = (rank - 1 + k) % k;
  // Scratch for incoming partial sums, reused across calls (the comm thread is one thread).
  thread_local std::vector<T> incoming;
  if (incoming.size() < base + 1) incoming.resize(base + 1);

  for (int s = 0; s < k - 1; ++s) {
    const int send_c = ((rank - s) % k + k) % k;
    const int recv_c = ((rank - s - 1) % k + k) % k;
    sendrecv(data + chunk_begin(send_c), static_cast<int>(chunk_size(send_c)), incoming.data(),
             static_cast<int>(chunk_size(recv_c)), type, right, left, comm);
    count_traffic(chunk_size(send_c) * sizeof(T), chunk_size(recv_c) * sizeof(T));
    T* dst = data + chunk_begin(recv_c);
    const size_t n = chunk_size(recv_c);
    for (size_t i = 0; i < n; ++i) dst[i] += incoming[i];
  }
  for (int s = 0; s < k - 1; ++s) {
    const int send_c = ((rank + 1 - s) % k + k) % k;
    const int recv_c = ((rank - s) % k + k) % k;
    sendrecv(data + chunk_begin(send_c), static_cast<int>(chunk_size(send_c)), data + chunk_begin(recv_c),
             static_cast<int>(chunk_size(recv_c)), type, right, left, comm);
    count_traffic(chunk_size(send_c) * sizeof(T), chunk_size(recv_c) * sizeof(T));
  }
}

}  // namespace

void ring_allreduce_sum(void* data, size_t count, MPI_Datatype type, MPI_Comm comm) {
  if (type == MPI_FLOAT) return ring_impl(static_cast<float*>(data), count, type, comm);
  if (type == MPI_DOUBLE) return ring_impl(static_cast<double*>(data), count, type, comm);
  if (type == MPI_INT32_T || type == MPI_INT) return ring_impl(static_cast<int32_t*>(data), count, type, comm);
  if (type == MPI_INT64_T || type == MPI_LONG_LONG) return ring_impl(static_cast<int64_t*>(data), count, type, comm);
  throw std::invalid_argument("ring all-reduce: unsupported MPI datatype");
}

}  // namespace dpscale
