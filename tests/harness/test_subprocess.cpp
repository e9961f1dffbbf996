// test_subprocess.cpp — run_process: exit statuses, captured output, and the timeout ending
// everything the child started, including grandchildren in process groups of their own (as
// mpirun's ranks are).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <string>
#include <thread>

#include "harness/common/subprocess.h"

namespace {

// Running, not merely a zombie waiting for a parent (here: init) to reap it.
bool alive(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

TEST(HarnessSubprocess, CapturesOutputAndExitStatus) {
  const auto r = dpscale::run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(HarnessSubprocess, MissingProgramIsSpawnFailure) {
  const auto r = dpscale::run_process({"/nonexistent/dpscale-no-such-program"});
  EXPECT_TRUE(r.spawn_failed);
  EXPECT_EQ(r.exit_code, 127);
}

TEST(HarnessSubprocess, TimeoutKillsGrandchildrenInTheirOwnProcessGroups) {
  // The child ignores SIGTERM and starts a grandchild in a new process group (job control, as
  // mpirun does for its ranks), which also ignores SIGTERM. Both must be gone afterwards.
  const std::string pidfile = ::testing::TempDir() + "dpscale_grandchild.pid";
  std::remove(pidfile.c_str());
  dpscale::ProcessOptions opts;
  opts.timeout_s = 1.0;
  opts.kill_grace_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const auto r = dpscale::run_process(
      {"bash", "-c", "set -m; trap '' TERM; (trap '' TERM; exec sleep 300) & echo $! > " + pidfile + "; wait"}, opts);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(took, 10.0);
  std::ifstream in(pidfile);
  long grandchild = 0;
  ASSERT_TRUE(in >> grandchild);
  for (int i = 0; i < 50 && alive(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(grandchild)) << "grandchild " << grandchild << " survived the timeout";
}

}  // namespace
