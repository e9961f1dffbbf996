// heap_policy.cpp — glibc's mallopt settings described in heap_policy.h.
#include "heap_policy.h"

#include <cstdlib>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace dpscale {

std::string apply_heap_policy() {
  const char* env = std::getenv("DPSCALE_HEAP_POLICY");
  if (env && std::strcmp(env, "off") == 0) return "off (glibc defaults, DPSCALE_HEAP_POLICY=off)";
#if defined(__GLIBC__)
  // Blocks up to 1 GiB come from the heap (larger ones, e.g. a dataset, still get their own
  // mapping); up to 2 GiB free at the top of the heap stays there; all threads share the main
  // arena, so the comm thread's MPI temporaries land in the same, never-trimmed heap.
  const bool ok = mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1 && mallopt(M_TRIM_THRESHOLD, 0x7fffffff) == 1 &&
                  mallopt(M_ARENA_MAX, 1) == 1;
  return ok ? "on (mmap threshold 1 GiB, trim threshold 2 GiB, 1 arena)" : "glibc refused mallopt: defaults";
#else
  return "not glibc: allocator defaults";
#endif
}

}  // namespace dpscale
