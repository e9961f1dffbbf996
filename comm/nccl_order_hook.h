// nccl_order_hook.h — test-only hooks of the NCCL communicator that make a stream-ordering bug
// visible on one GPU (tests/trainers/test_nccl_order.cpp). Inert unless their variable is set.
//
// At K = 1 an all-reduce is a copy, so a missing cudaStreamWaitEvent still gives bit-identical
// weights: nothing the comm stream does changes the numbers. The hooks give it something to do,
// late: a delay kernel (~kSpinMs) on the comm stream and ×2 of the reduced gradients.
//   DPSCALE_TEST_NCCL_ORDER=after    all-reduce, delay, ×2: an update that ran after the comm
//                                    stream sees 2·g (the weights of --lr 2L); one that did not, g
//   DPSCALE_TEST_NCCL_ORDER=before   delay, all-reduce, ×2: the bucket waits on the comm stream
//                                    while compute runs ahead; nothing may write it meanwhile
//   DPSCALE_TEST_NCCL_NO_FINISH_WAIT=1   the negative control: finish() does not make the compute
//                                    stream wait for the comm stream (the checks above must fail)
// A word other than after/before is refused (std::invalid_argument), so a typo cannot pass.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace dpscale {

struct NcclOrderHook {
  enum class At { off, after, before };
  At at = At::off;
  bool no_finish_wait = false;

  static NcclOrderHook from_env();
  // Queued on `s` around the all-reduce of x[0, n): before() ahead of it, after() behind it.
  void before(float* x, size_t n, cudaStream_t s) const;
  void after(float* x, size_t n, cudaStream_t s) const;
};

inline constexpr double kSpinMs = 20.0;

}  // namespace dpscale
