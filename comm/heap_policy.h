// heap_policy.h — keeps freed large blocks in the process heap, for every MPI program of dpscale.
//
// Why: Open MPI's all-reduce (the default --allreduce native) mallocs a temporary buffer of the
// message's size on every call and frees it afterwards. glibc serves a block above its mmap
// threshold with a fresh mmap and gives it back with munmap on free; the threshold adapts
// upwards to the largest block freed, but never past 32 MiB (DEFAULT_MMAP_THRESHOLD_MAX on
// 64-bit). So from 32 MiB up, every all-reduce faults in (zeroes) a new buffer page by page:
// measured here, native busbw fell about 10x from 16 MiB to 32 MiB while our ring (whose
// scratch is a reused thread_local vector) did not. Below the cliff, heap trimming can hand
// the top of the heap back the same way. Blocks a non-main thread allocates (the comm thread of
// MpiCommunicator) come from a thread arena, whose heaps are at most 64 MiB: anything larger is
// mmapped there whatever the threshold — hence one arena. bench/README.md has the measurements.
//
// The cost: the heap keeps its peak size instead of returning freed memory to the OS, which a
// training process (whose working set is its peak) does not miss.
#pragma once

#include <string>

namespace dpscale {

// Applies the policy (glibc mallopt): mmap threshold 1 GiB, trim threshold 2 GiB, one arena.
// Call before MPI_Init, once per process; MpiEnv does. The environment variable
// DPSCALE_HEAP_POLICY=off leaves glibc's defaults (to measure the difference; bench_allreduce
// names the state in its banner). Returns what was done, e.g. "on (mmap threshold 1 GiB, ...)".
std::string apply_heap_policy();

}  // namespace dpscale
