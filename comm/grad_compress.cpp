// grad_compress.cpp — the 2-byte all-reduces of grad_compress.h.
#include "grad_compress.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "mpi_check.h"

namespace dpscale {

namespace {

constexpr int kRing2Tag = 7303, kStar2Tag = 7304;  // small tags: see ring_allreduce.cpp

void encode(GradFormat f, const float* x, uint16_t* h, size_t n) {
  for (size_t i = 0; i < n; ++i) h[i] = encode_grad(f, x[i]);
}
void decode(GradFormat f, const uint16_t* h, float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = decode_grad(f, h[i]);
}

// MPI user ops: inout[i] = round(widen(in[i]) + widen(inout[i])).
template <GradFormat F>
void sum_op(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = encode_grad(F, decode_grad(F, a[i]) + decode_grad(F, b[i]));
}

}  // namespace

MPI_Op grad_sum_op(GradFormat f) {
  static MPI_Op bf16_op = MPI_OP_NULL, fp16_op = MPI_OP_NULL;
  static std::once_flag once;
  std::call_once(once, [] {
    MPI_CHECK(MPI_Op_create(&sum_op<GradFormat::bf16>, 1, &bf16_op));
    MPI_CHECK(MPI_Op_create(&sum_op<GradFormat::fp16>, 1, &fp16_op));
  });
  return f == GradFormat::bf16 ? bf16_op : fp16_op;
}

namespace {

void native_2byte(GradFormat f, float* data, size_t count, MPI_Comm comm) {
  thread_local std::vector<uint16_t> wire;
  if (wire.size() < count) wire.resize(count);
  encode(f, data, wire.data(), count);
  const MPI_Op op = grad_sum_op(f);
  for (size_t done = 0; done < count;) {  // MPI counts are int
    const size_t piece = std::min(count - done, size_t{1} << 30);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, wire.data() + done, static_cast<int>(piece), MPI_UINT16_T, op, comm));
    done += piece;
  }
  decode(f, wire.data(), data, count);
}

void ring_2byte(GradFormat f, float* data, size_t count, MPI_Comm comm) {
  int rank = 0, k = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &k));
  if (count == 0) return;
  thread_local std::vector<uint16_t> wire, incoming;
  if (wire.size() < count) wire.resize(count);
  if (k == 1) {  // one rank: only the rounding, as every rank gets it
    encode(f, data, wire.data(), count);
    decode(f, wire.data(), data, count);
    return;
  }
  // The same chunking and schedule as ring_allreduce.cpp.
  const size_t base = count / k, extra = count % k;
  auto begin = [&](int c) { return c * base + std::min<size_t>(c, extra); };
  auto size = [&](int c) { return base + (static_cast<size_t>(c) < extra ? 1 : 0); };
  if (base + 1 > static_cast<size_t>(INT_MAX)) throw std::runtime_error("ring all-reduce: chunk too large for an MPI count");
  if (incoming.size() < base + 1) incoming.resize(base + 1);
  const int right = (rank + 1) % k, left = (rank - 1 + k) % k;
  for (int s = 0; s < k - 1; ++s) {
    const int send_c = ((rank - s) % k + k) % k, recv_c = ((rank - s - 1) % k + k) % k;
    encode(f, data + begin(send_c), wire.data() + begin(send_c), size(send_c));  // my fp32 partial, rounded
    MPI_CHECK(MPI_Sendrecv(wire.data() + begin(send_c), static_cast<int>(size(send_c)), MPI_UINT16_T, right, kRing2Tag,
                           incoming.data(), static_cast<int>(size(recv_c)), MPI_UINT16_T, left, kRing2Tag, comm,
                           MPI_STATUS_IGNORE));
    float* dst = data + begin(recv_c);
    for (size_t i = 0; i < size(recv_c); ++i) dst[i] += decode_grad(f, incoming[i]);  // summed in fp32
  }
  // Rank r now owns the complete chunk (r + 1) mod K in fp32: round it once, pass 2-byte chunks on.
  const int own = (rank + 1) % k;
  encode(f, data + begin(own), wire.data() + begin(own), size(own));
  for (int s = 0; s < k - 1; ++s) {
    const int send_c = ((rank + 1 - s) % k + k) % k, recv_c = ((rank - s) % k + k) % k;
    MPI_CHECK(MPI_Sendrecv(wire.data() + begin(send_c), static_cast<int>(size(send_c)), MPI_UINT16_T, right, kRing2Tag,
                           wire.data() + begin(recv_c), static_cast<int>(size(recv_c)), MPI_UINT16_T, left, kRing2Tag,
                           comm, MPI_STATUS_IGNORE));
  }
  decode(f, wire.data(), data, count);  // the owner too: every rank the same values
}

void star_2byte(GradFormat f, float* data, size_t count, MPI_Comm comm) {
  int rank = 0, k = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &k));
  if (count == 0) return;
  if (count > static_cast<size_t>(INT_MAX)) throw std::runtime_error("star all-reduce: buffer too large for an MPI count");
  const int n = static_cast<int>(count);
  thread_local std::vector<uint16_t> wire;
  if (wire.size() < count) wire.resize(count);
  if (rank == 0) {
    for (int src = 1; src < k; ++src) {
      MPI_CHECK(MPI_Recv(wire.data(), n, MPI_UINT16_T, src, kStar2Tag, comm, MPI_STATUS_IGNORE));
      for (size_t i = 0; i < count; ++i) data[i] += decode_grad(f, wire[i]);  // in rank order, fp32
    }
    encode(f, data, wire.data(), count);
    for (int dst = 1; dst < k; ++dst) MPI_CHECK(MPI_Send(wire.data(), n, MPI_UINT16_T, dst, kStar2Tag, comm));
  } else {
    encode(f, data, wire.data(), count);
    MPI_CHECK(MPI_Send(wire.data(), n, MPI_UINT16_T, 0, kStar2Tag, comm));
    MPI_CHECK(MPI_Recv(wire.data(), n, MPI_UINT16_T, 0, kStar2Tag, comm, MPI_STATUS_IGNORE));
  }
  decode(f, wire.data(), data, count);
}

}  // namespace

void allreduce_sum_2byte(AllreduceAlgo algo, GradFormat fmt, float* data, size_t count, MPI_Comm comm) {
  if (fmt == GradFormat::fp32) throw std::logic_error("allreduce_sum_2byte: fp32 is not a 2-byte format");
  switch (algo) {
    case AllreduceAlgo::ring: return ring_2byte(fmt, data, count, comm);
    case AllreduceAlgo::star: return star_2byte(fmt, data, count, comm);
    case AllreduceAlgo::native: return native_2byte(fmt, data, count, comm);
    case AllreduceAlgo::hier: break;  // refused when the options are parsed (2-byte is not with hier)
  }
  throw std::logic_error("allreduce_sum_2byte: no 2-byte path for this all-reduce algorithm");
}

}  // namespace dpscale
