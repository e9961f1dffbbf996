// bisect_build.cpp — a revision's worktree and CPU-only trainers (bisect_build.h).
#include "harness/bisect/bisect_build.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/common/subprocess.h"

namespace dpscale::bisect {

namespace {

namespace fs = std::filesystem;

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    std::error_code ec;
    if (!d.empty() && fs::is_regular_file(fs::path(d) / program, ec)) return true;
  }
  return false;
}

// Runs one cmake call, its output appended to the log; true when it exited 0.
bool run_logged(const std::vector<std::string>& argv, const BuildPlan& plan, const std::string& log) {
  ProcessOptions po;
  po.timeout_s = plan.timeout_s;
  const ProcessResult r = run_process(argv, po);
  std::ofstream out(log, std::ios::app);
  out << "$ " << quote_argv(argv) << "\n" << r.out << r.err;
  if (r.timed_out) out << "(timed out after " << plan.timeout_s << " s)\n";
  out << "(exit " << r.exit_code << ")\n";
  return !r.spawn_failed && r.exit_code == 0;
}

}  // namespace

std::string revision_dir(const BuildPlan& plan, const Commit& c) { return (fs::path(plan.work) / c.id.substr(0, 12)).string(); }

std::string bin_dir(const BuildPlan& plan, const Commit& c) {
  return (fs::path(revision_dir(plan, c)) / "src" / "build" / "bin").string();
}

BuildOutcome build_revision(const BuildPlan& plan, const Commit& c) {
  const auto t0 = std::chrono::steady_clock::now();
  BuildOutcome b;
  const fs::path dir = revision_dir(plan, c);
  const std::string src = (dir / "src").string(), build = (dir / "src" / "build").string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  b.log = (dir / "build.log").string();
  auto done = [&](bool ok, const std::string& why) {
    b.ok = ok;
    b.why = why;
    b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (ok) b.bin_dir = bin_dir(plan, c);
    return b;
  };
  std::string git_why;
  if (!add_worktree(plan.repo, c.id, src, &git_why)) return done(false, "git worktree add failed: " + git_why);
  // Configured once; a later bisect over the same revision builds in the same directory.
  if (!fs::exists(fs::path(build) / "CMakeCache.txt", ec)) {
    std::vector<std::string> configure = {"cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                                          "-DDPSCALE_WITH_CUDA=OFF"};
    if (on_path("ccache")) {
      configure.insert(configure.end(), {"-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"});
    }
    if (!run_logged(configure, plan, b.log)) {
      // A failed configure leaves a cache that the next attempt must not take for a good one.
      fs::remove(fs::path(build) / "CMakeCache.txt", ec);
      return done(false, "cmake configure failed");
    }
  }
  std::vector<std::string> make = {"cmake", "--build", build, "-j", std::to_string(plan.jobs), "--target"};
  make.insert(make.end(), plan.targets.begin(), plan.targets.end());
  if (!run_logged(make, plan, b.log)) return done(false, "the build failed");
  return done(true, "");
}

}  // namespace dpscale::bisect
