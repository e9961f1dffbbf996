// test_heap_policy.cpp — the heap policy (comm/heap_policy.h) does what it is for: after it, a
// 64 MiB block (an Open MPI all-reduce temporary of a 64 MiB message) comes from the heap, not
// from a fresh mmap, and freeing it keeps the memory there for the next one; with
// DPSCALE_HEAP_POLICY=off glibc's defaults stand, under which the same block is an mmap every time.
//
// What is observed is glibc's own accounting (mallinfo2): hblkhd, the bytes in mmapped chunks,
// and arena, the bytes the arenas got from the system. mallopt settings are process-wide and
// cannot be undone, so each case runs in a process of its own (gtest's EXPECT_EXIT forks): the
// case prints what it saw and exits 0 when every check held, 1 otherwise.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "comm/heap_policy.h"

namespace dpscale {
namespace {

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DPSCALE_HEAP_POLICY_TESTABLE 1

constexpr size_t kBlock = size_t{64} << 20;  // above glibc's largest default mmap threshold (32 MiB)

// A store the compiler must keep, so no malloc/free pair below can be optimised away.
void* volatile g_sink = nullptr;

void* take_block() {
  char* p = static_cast<char*>(std::malloc(kBlock));
  if (p) p[kBlock - 1] = 1;
  g_sink = p;
  return p;
}

// The checks of one case, in its own process: each failed one is printed, and the process
// exits 1 if any failed.
class Case {
 public:
  void check(bool ok, const std::string& what) {
    if (!ok) failures_.push_back(what);
  }
  [[noreturn]] void end() {
    for (const auto& f : failures_) std::fprintf(stderr, "heap policy check failed: %s\n", f.c_str());
    std::fflush(stderr);
    std::_Exit(failures_.empty() ? 0 : 1);
  }

 private:
  std::vector<std::string> failures_;
};

std::string mib(size_t bytes) { return std::to_string(static_cast<double>(bytes) / (1 << 20)) + " MiB"; }

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The heap before a 64 MiB block is taken (m0), with it (m1), after it is freed (m2) and with a
// second one taken (m3). Every measurement first, with nothing else allocated in between (a
// check's message would be, and could land in the freed block and split it).
struct TwoBlocks {
  struct mallinfo2 m0, m1, m2, m3;
};
TwoBlocks take_two_blocks() {
  TwoBlocks t;
  t.m0 = mallinfo2();
  void* p = take_block();
  t.m1 = mallinfo2();
  std::free(p);
  t.m2 = mallinfo2();
  p = take_block();
  t.m3 = mallinfo2();
  std::free(p);
  return t;
}

// Policy on: the block comes from the main heap (no mmapped bytes appear), freeing it leaves the
// heap as large as it was (no trim), and a second block reuses that memory (the heap does not
// grow again, still no mmap).
void policy_on_main_thread() {
  ::unsetenv("DPSCALE_HEAP_POLICY");
  const std::string said = apply_heap_policy();
  const auto [m0, m1, m2, m3] = take_two_blocks();
  Case c;
  c.check(starts_with(said, "on "), "apply_heap_policy() said '" + said + "', expected 'on (...)'");
  c.check(m1.hblkhd == m0.hblkhd, "the first 64 MiB block was mmapped: hblkhd " + mib(m0.hblkhd) + " -> " + mib(m1.hblkhd));
  c.check(m1.arena >= m0.arena + kBlock, "the heap did not grow to hold the block: arena " + mib(m0.arena) + " -> " + mib(m1.arena));
  c.check(m2.arena == m1.arena, "freeing the block gave heap memory back (trim): arena " + mib(m1.arena) + " -> " + mib(m2.arena));
  c.check(m3.hblkhd == m0.hblkhd, "the second 64 MiB block was mmapped: hblkhd " + mib(m0.hblkhd) + " -> " + mib(m3.hblkhd));
  c.check(m3.arena == m1.arena, "the second block did not reuse the first one's memory: arena " + mib(m1.arena) + " -> " + mib(m3.arena));
  c.end();
}

// Policy on, block taken by another thread (as MpiCommunicator's comm thread takes Open MPI's
// temporaries): it too comes from the one heap. A thread arena's heaps hold at most 64 MiB,
// so with more than one arena the block would be mmapped whatever the threshold.
void policy_on_other_thread() {
  ::unsetenv("DPSCALE_HEAP_POLICY");
  apply_heap_policy();
  const struct mallinfo2 m0 = mallinfo2();
  struct mallinfo2 m1 {};
  std::thread t([&] {
    void* p = take_block();
    m1 = mallinfo2();
    std::free(p);
  });
  t.join();
  Case c;
  c.check(m1.hblkhd == m0.hblkhd, "a thread's 64 MiB block was mmapped: hblkhd " + mib(m0.hblkhd) + " -> " + mib(m1.hblkhd));
  c.end();
}

// Policy off: glibc's defaults, under which each 64 MiB block is a mapping of its own, made on
// malloc and unmade on free — the per-call mmap the policy exists to avoid.
void policy_off() {
  ::setenv("DPSCALE_HEAP_POLICY", "off", 1);
  const std::string said = apply_heap_policy();
  const auto [m0, m1, m2, m3] = take_two_blocks();
  Case c;
  c.check(starts_with(said, "off "), "apply_heap_policy() said '" + said + "', expected 'off (...)'");
  c.check(m1.hblkhd >= m0.hblkhd + kBlock, "the first block was not mmapped: hblkhd " + mib(m0.hblkhd) + " -> " + mib(m1.hblkhd));
  c.check(m2.hblkhd == m0.hblkhd, "freeing the block left it mapped: hblkhd " + mib(m0.hblkhd) + " -> " + mib(m2.hblkhd));
  c.check(m3.hblkhd >= m0.hblkhd + kBlock, "the second block was not mmapped: hblkhd " + mib(m0.hblkhd) + " -> " + mib(m3.hblkhd));
  c.end();
}
#endif

TEST(HeapPolicyDeathTest, OnKeepsA64MiBBlockInTheHeap) {
#ifdef DPSCALE_HEAP_POLICY_TESTABLE
  EXPECT_EXIT(policy_on_main_thread(), ::testing::ExitedWithCode(0), "");
#else
  GTEST_SKIP() << "glibc's malloc is not the allocator here (another libc, or a sanitizer's)";
#endif
}

TEST(HeapPolicyDeathTest, OnKeepsAThreadsBlockInTheOneHeap) {
#ifdef DPSCALE_HEAP_POLICY_TESTABLE
  EXPECT_EXIT(policy_on_other_thread(), ::testing::ExitedWithCode(0), "");
#else
  GTEST_SKIP() << "glibc's malloc is not the allocator here (another libc, or a sanitizer's)";
#endif
}

TEST(HeapPolicyDeathTest, OffLeavesGlibcDefaultsEachBlockAnMmap) {
#ifdef DPSCALE_HEAP_POLICY_TESTABLE
  EXPECT_EXIT(policy_off(), ::testing::ExitedWithCode(0), "");
#else
  GTEST_SKIP() << "glibc's malloc is not the allocator here (another libc, or a sanitizer's)";
#endif
}

}  // namespace
}  // namespace dpscale
