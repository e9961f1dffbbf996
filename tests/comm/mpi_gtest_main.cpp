// mpi_gtest_main.cpp — main() for GoogleTest binaries that are MPI programs, launched whole by
// CTest as `mpirun -np K <binary>` (tests/comm/CMakeLists.txt).
//
// Every rank runs every test. Rank 0 prints gtest's usual output; the other ranks print only
// their failures, prefixed with their rank. At the end the ranks agree on the outcome (MAX of
// "this rank failed"), so every rank — and therefore mpirun — exits non-zero when any rank
// failed. Tests must keep their collectives in step on all ranks: compare with EXPECT_*, and
// ASSERT_* only on facts every rank shares (world size, counts), or a failing rank would leave
// its peers waiting in a collective (CTest's TIMEOUT is the backstop).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "comm/mpi_check.h"
#include "comm/mpi_env.h"

namespace {

class RankFailurePrinter final : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  // The test's name is remembered here: UnitTest::current_test_info() must not be called from
  // OnTestPartResult (gtest holds its own mutex there; it deadlocks).
  void OnTestStart(const ::testing::TestInfo& info) override {
    test_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s: %s:%d: Failure\n%s\n", rank_, test_.c_str(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.message());
  }

 private:
  int rank_;
  std::string test_ = "(outside a test)";
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // MPI_THREAD_MULTIPLE: the MpiCommunicator's comm thread calls MPI alongside the main thread.
  dpscale::MpiEnv env(&argc, &argv);
  if (env.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(env.rank()));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_CHECK(MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (env.rank() == 0) {
    std::fprintf(stderr, "[mpi] %d rank(s): %s\n", env.world_size(),
                 any_failed ? "FAILED on at least one rank" : "all ranks passed");
  }
  return any_failed;
}
