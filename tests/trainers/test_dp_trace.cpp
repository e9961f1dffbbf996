// test_dp_trace.cpp — --trace under mpirun -np 2 (CPU, MPI): the merged Chrome
// trace-event file of 2 steps of the small model holds every rank, and its events obey the
// invariants of data-parallel training:
//   * every all-reduce starts no earlier than the end of the backward span of the last tensor
//     it covers (a gradient is reduced only once it exists);
//   * bucketed: some all-reduce starts before that rank's backward has ended (overlap);
//   * naive (the negative control): none does — it reduces after backward;
//   * each rank carries its contention counters: per traced step a run delay (ms) and an
//     involuntary-switch count, at the step's start, and a zero when the last traced step ends.
// The file's size per traced step and rank is printed (the README quotes it).
//
// Run: ctest -R DpTrace --output-on-failure
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dp_support.h"

namespace dpscale::test {
namespace {

struct Traced {
  nlohmann::json trace;
  std::uintmax_t bytes;
};

Traced trace_of(const std::string& exe, const ScratchDir& dir, const std::vector<std::string>& extra) {
  const std::string path = dir.file(exe + ".json");
  record_of(mpirun_argv(2, exe,
                        std::vector<std::string>{"--backend", "cpu", "--model", "small", "--samples", "4096",
                                                 "--batch-size", "1024", "--epochs", "1", "--warmup-steps", "1", "--quiet",
                                                 "--trace", path, "--trace-steps", "2:3"} + extra),
            180);
  std::ifstream in(path);
  return Traced{nlohmann::json::parse(in), std::filesystem::file_size(path)};
}

struct Span {
  double start, end;
};

// Per (rank, step): backward end of each tensor, the end of the last backward span, and the
// all-reduces (start, last tensor covered).
struct StepView {
  std::map<int, double> backward_end;  // tensor -> end
  double last_backward_end = 0.0;
  std::vector<std::pair<double, int>> allreduces;
};

std::map<std::pair<int, int>, StepView> view(const nlohmann::json& trace) {
  std::map<std::pair<int, int>, StepView> v;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int pid = e["pid"], step = e["args"]["step"];
    StepView& s = v[{pid, step}];
    const double ts = e["ts"], end = ts + e["dur"].get<double>();
    if (e["cat"] == "compute" && e["args"].contains("tensor")) {
      s.backward_end[e["args"]["tensor"].get<int>()] = end;
      s.last_backward_end = std::max(s.last_backward_end, end);
    }
    if (e["cat"] == "comm") s.allreduces.emplace_back(ts, e["args"]["last_tensor"].get<int>());
  }
  return v;
}

TEST(DpTrace, BucketedOverlapsBackwardAndNoAllreducePrecedesItsGradient) {
  ScratchDir dir("trace");
  const Traced t = trace_of("train_ddp_bucketed", dir, {"--bucket-cap-mb", "1"});
  std::set<int> pids;
  std::set<std::string> cats;
  for (const auto& e : t.trace["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e.contains("cat")) cats.insert(e["cat"].get<std::string>());
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_EQ(cats, (std::set<std::string>{"step", "compute", "comm"}));
  const auto v = view(t.trace);
  ASSERT_EQ(v.size(), 4u) << "2 ranks x steps 2 and 3";
  int overlapping = 0;
  for (const auto& [key, s] : v) {
    EXPECT_EQ(s.backward_end.size(), 8u);  // small: 4 layers, weight and bias
    ASSERT_GE(s.allreduces.size(), 3u) << "buckets capped at 1 MiB";
    for (const auto& [start, last_tensor] : s.allreduces) {
      ASSERT_TRUE(s.backward_end.count(last_tensor));
      EXPECT_GE(start, s.backward_end.at(last_tensor)) << "rank " << key.first << " step " << key.second;
      if (start < s.last_backward_end) ++overlapping;
    }
  }
  EXPECT_GT(overlapping, 0) << "bucketed all-reduces must start while backward still runs";
  // Contention counters: per rank, steps 2 and 3 and the closing zero, each series apart.
  std::map<std::pair<int, std::string>, std::vector<nlohmann::json>> counters;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "C") counters[{e["pid"].get<int>(), e["name"].get<std::string>()}].push_back(e);
  }
  for (int pid : {0, 1}) {
    const auto& delay = counters[{pid, "run delay (ms per step)"}];
    const auto& switches = counters[{pid, "involuntary switches (per step)"}];
    ASSERT_EQ(delay.size(), 3u) << "rank " << pid;
    ASSERT_EQ(switches.size(), 3u) << "rank " << pid;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_GE(delay[i]["args"]["ms"].get<double>(), 0.0);
      EXPECT_GE(switches[i]["args"]["count"].get<int64_t>(), 0);
      if (i > 0) {
        EXPECT_GT(delay[i]["ts"].get<double>(), delay[i - 1]["ts"].get<double>());
      }
    }
    EXPECT_EQ(delay[2]["args"]["ms"].get<double>(), 0.0);
  }
  std::printf("trace: %ju bytes, %.1f kB per step and rank\n", t.bytes, t.bytes / 4.0 / 1e3);
}

TEST(DpTrace, NaiveReducesOnlyAfterBackward) {
  ScratchDir dir("trace");
  const auto v = view(trace_of("train_dp_naive", dir, {}).trace);
  ASSERT_EQ(v.size(), 4u);
  for (const auto& [key, s] : v) {
    ASSERT_EQ(s.allreduces.size(), 8u);  // one per tensor
    for (const auto& [start, last_tensor] : s.allreduces) EXPECT_GE(start, s.last_backward_end);
  }
}

}  // namespace
}  // namespace dpscale::test
