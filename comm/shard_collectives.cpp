// shard_collectives.cpp — the reduce-scatter and all-gather of shard_collectives.h.
#include "shard_collectives.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "grad_compress.h"
#include "mpi_check.h"
#include "traffic.h"
#include "watchdog.h"

namespace dpscale {

namespace {

// Small tags (ring_allreduce.cpp says why): one each, so a reduce-scatter's message is never
// taken for an all-gather's.
constexpr int kRsTag = 7311, kAgTag = 7312, kRs2Tag = 7313;

struct Blocks {
  int rank = 0, k = 1;
  size_t block = 0;
};

Blocks blocks_of(size_t count, MPI_Comm comm, const char* what) {
  Blocks b;
  MPI_CHECK(MPI_Comm_rank(comm, &b.rank));
  MPI_CHECK(MPI_Comm_size(comm, &b.k));
  if (count % static_cast<size_t>(b.k) != 0) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(count) + " elements do not split into " +
                                std::to_string(b.k) + " equal blocks");
  }
  b.block = count / static_cast<size_t>(b.k);
  if (b.block > static_cast<size_t>(INT_MAX)) throw std::runtime_error(std::string(what) + ": block too large for an MPI count");
  return b;
}

int mod(int a, int k) { return ((a % k) + k) % k; }

// MPI_Sendrecv waited for through the watchdog's polled wait.
void sendrecv(const void* send, void* recv, int n, MPI_Datatype type, int right, int left, int tag, MPI_Comm comm,
              size_t elem_bytes) {
  MPI_Request r[2];
  MPI_CHECK(MPI_Irecv(recv, n, type, left, tag, comm, &r[0]));
  MPI_CHECK(MPI_Isend(send, n, type, right, tag, comm, &r[1]));
  mpi_wait_all(2, r);
  count_traffic(static_cast<size_t>(n) * elem_bytes, static_cast<size_t>(n) * elem_bytes);
}

void ring_reduce_scatter(float* data, const Blocks& b, MPI_Comm comm) {
  const int n = static_cast<int>(b.block), right = (b.rank + 1) % b.k, left = mod(b.rank - 1, b.k);
  thread_local std::vector<float> incoming;
  if (incoming.size() < b.block) incoming.resize(b.block);
  for (int s = 0; s < b.k - 1; ++s) {
    const int send_c = mod(b.rank - s - 1, b.k), recv_c = mod(b.rank - s - 2, b.k);
    sendrecv(data + send_c * b.block, incoming.data(), n, MPI_FLOAT, right, left, kRsTag, comm, sizeof(float));
    float* dst = data + recv_c * b.block;
    for (size_t i = 0; i < b.block; ++i) dst[i] += incoming[i];
  }
}

void ring_allgather(float* data, const Blocks& b, MPI_Comm comm) {
  const int n = static_cast<int>(b.block), right = (b.rank + 1) % b.k, left = mod(b.rank - 1, b.k);
  for (int s = 0; s < b.k - 1; ++s) {
    const int send_c = mod(b.rank - s, b.k), recv_c = mod(b.rank - s - 1, b.k);
    sendrecv(data + send_c * b.block, data + recv_c * b.block, n, MPI_FLOAT, right, left, kAgTag, comm, sizeof(float));
  }
}

// The ring with 2-byte messages: partial sums stay fp32 here, each hop sends them rounded.
void ring_reduce_scatter_2byte(GradFormat f, float* data, const Blocks& b, MPI_Comm comm) {
  const int n = static_cast<int>(b.block), right = (b.rank + 1) % b.k, left = mod(b.rank - 1, b.k);
  thread_local std::vector<uint16_t> out, incoming;
  if (out.size() < b.block) out.resize(b.block);
  if (incoming.size() < b.block) incoming.resize(b.block);
  for (int s = 0; s < b.k - 1; ++s) {
    const int send_c = mod(b.rank - s - 1, b.k), recv_c = mod(b.rank - s - 2, b.k);
    const float* src = data + send_c * b.block;
    for (size_t i = 0; i < b.block; ++i) out[i] = encode_grad(f, src[i]);
    sendrecv(out.data(), incoming.data(), n, MPI_UINT16_T, right, left, kRs2Tag, comm, sizeof(uint16_t));
    float* dst = data + recv_c * b.block;
    for (size_t i = 0; i < b.block; ++i) dst[i] += decode_grad(f, incoming[i]);
  }
}

}  // namespace

void reduce_scatter_sum(AllreduceAlgo algo, float* data, size_t count, MPI_Comm comm) {
  const Blocks b = blocks_of(count, comm, "reduce-scatter");
  if (b.k == 1 || count == 0) return;
  if (algo == AllreduceAlgo::ring) return ring_reduce_scatter(data, b, comm);
  if (algo != AllreduceAlgo::native) throw std::logic_error("reduce-scatter: only native and ring");
  // In place the library reads the whole buffer and writes our block at its start: moved to
  // block r afterwards (block 0 is scratch then on every rank but rank 0).
  MPI_Request req;
  MPI_CHECK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, data, static_cast<int>(b.block), MPI_FLOAT, MPI_SUM, comm, &req));
  mpi_wait_all(1, &req);
  if (b.rank != 0) std::memcpy(data + b.rank * b.block, data, b.block * sizeof(float));  // disjoint for r >= 1
}

void reduce_scatter_sum_2byte(AllreduceAlgo algo, GradFormat fmt, float* data, size_t count, MPI_Comm comm) {
  if (fmt == GradFormat::fp32) throw std::logic_error("reduce_scatter_sum_2byte: fp32 is not a 2-byte format");
  const Blocks b = blocks_of(count, comm, "reduce-scatter");
  if (count == 0) return;
  float* own = data + b.rank * b.block;
  if (algo == AllreduceAlgo::native && b.k > 1) {
    thread_local std::vector<uint16_t> wire;
    if (wire.size() < count) wire.resize(count);
    for (size_t i = 0; i < count; ++i) wire[i] = encode_grad(fmt, data[i]);
    MPI_Request req;
    MPI_CHECK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, wire.data(), static_cast<int>(b.block), MPI_UINT16_T,
                                        grad_sum_op(fmt), comm, &req));
    mpi_wait_all(1, &req);
    for (size_t i = 0; i < b.block; ++i) own[i] = decode_grad(fmt, wire[i]);
    return;
  }
  if (algo != AllreduceAlgo::native && algo != AllreduceAlgo::ring) throw std::logic_error("reduce-scatter: only native and ring");
  if (b.k > 1) ring_reduce_scatter_2byte(fmt, data, b, comm);
  // The complete fp32 block rounded once, as the 2-byte all-reduce's owner does (one rank: only
  // the rounding, as grad_compress.cpp's one-rank ring).
  for (size_t i = 0; i < b.block; ++i) own[i] = decode_grad(fmt, encode_grad(fmt, own[i]));
}

void allgather(AllreduceAlgo algo, float* data, size_t count, MPI_Comm comm) {
  const Blocks b = blocks_of(count, comm, "all-gather");
  if (b.k == 1 || count == 0) return;
  if (algo == AllreduceAlgo::ring) return ring_allgather(data, b, comm);
  if (algo != AllreduceAlgo::native) throw std::logic_error("all-gather: only native and ring");
  MPI_Request req;
  MPI_CHECK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, static_cast<int>(b.block), MPI_FLOAT, comm, &req));
  mpi_wait_all(1, &req);
}

}  // namespace dpscale
