// test_comm_unit.cpp — the arithmetic around the all-reduce, no MPI needed: algbw/busbw,
// rank 0's traffic, the α-β link model against the textbook's own numbers, algorithm names,
// and bench_allreduce's nccl-tests-style options, size sweep, table; bench_gemm's GEMM list;
// the bench programs' own flags and the median's interval (bench_args.h); the median itself
// (core/median.h);
// which queued all-reduce the watchdog names for a wait, a batch's untimed calls included
// (comm/inflight.h, used by NCCL); what
// --share-gpu tells NCCL (comm/nccl_shared_gpu.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "allreduce_options.h"
#include "allreduce_table.h"
#include "bench_args.h"
#include "comm/allreduce_algos.h"
#include "comm/inflight.h"
#include "comm/nccl_shared_gpu.h"
#include "contract/link_model.h"
#include "core/errors.h"
#include "core/median.h"

namespace dpscale {
namespace {

using bench::AllreduceBenchOptions;

TEST(AllreduceBandwidth, AlgbwIsBytesOverTime) {
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(1'000'000'000, 1.0, 4).algbw_gbps, 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(size_t{256} << 20, 0.1, 2).algbw_gbps, 2.68435456);
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(8, 2e-6, 3).algbw_gbps, 0.004);
}

TEST(AllreduceBandwidth, BusbwScalesByTwoKMinusOneOverK) {
  const double t = 0.5, b = 2e9;  // algbw 4 GB/s
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(b, t, 2).busbw_gbps, 4.0);   // 2·1/2 = 1
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(b, t, 3).busbw_gbps, 4.0 * 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(b, t, 4).busbw_gbps, 6.0);   // 2·3/4 = 1.5
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(b, t, 8).busbw_gbps, 7.0);   // 2·7/8 = 1.75
  EXPECT_DOUBLE_EQ(allreduce_bandwidth(b, t, 1).busbw_gbps, 0.0);   // nothing crosses a link
}

TEST(AllreduceBandwidth, ZeroTimeGivesZeroNotInfinity) {
  const auto bw = allreduce_bandwidth(1024, 0.0, 2);
  EXPECT_EQ(bw.algbw_gbps, 0.0);
  EXPECT_EQ(bw.busbw_gbps, 0.0);
}

TEST(Rank0Traffic, RingStarNative) {
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::ring, 1000, 4), 1500.0);  // 2(K-1)/K·B
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::star, 1000, 4), 3000.0);  // (K-1)·B
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::native, 1000, 4), 1500.0);
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::ring, 1000, 2), 1000.0);
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::star, 1000, 1), 0.0);
  // The workshop's table: XLarge, D = 208 MB, N = 4 — naive 624 MB, ring 312 MB.
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::star, 208'000'000, 4), 624e6);
  EXPECT_DOUBLE_EQ(rank0_bytes_sent(AllreduceAlgo::ring, 208'000'000, 4), 312e6);
}

// Each algorithm's α-β pattern, written once in contract/allreduce_algo.h: the ring's 2(K-1)
// hops of B/K, the star's 2(K-1) hops of B of which rank 0 sends K-1; native and hier on one
// node as the ring; nothing for K = 1.
TEST(HopPattern, EachAlgorithmsHopsAndBytes) {
  const HopPattern ring = hop_pattern(AllreduceAlgo::ring, 1000, 4), star = hop_pattern(AllreduceAlgo::star, 1000, 4);
  EXPECT_DOUBLE_EQ(ring.steps, 6.0);
  EXPECT_DOUBLE_EQ(ring.hop_bytes, 250.0);
  EXPECT_DOUBLE_EQ(ring.link_bytes(), 1500.0);
  EXPECT_DOUBLE_EQ(ring.rank0_bytes_sent(), 1500.0);
  EXPECT_DOUBLE_EQ(star.steps, 6.0);
  EXPECT_DOUBLE_EQ(star.hop_bytes, 1000.0);
  EXPECT_DOUBLE_EQ(star.link_bytes(), 6000.0);
  EXPECT_DOUBLE_EQ(star.rank0_bytes_sent(), 3000.0);
  for (AllreduceAlgo a : {AllreduceAlgo::native, AllreduceAlgo::hier}) {
    EXPECT_DOUBLE_EQ(hop_pattern(a, 1000, 4).link_bytes(), ring.link_bytes());
    EXPECT_DOUBLE_EQ(hop_pattern(a, 1000, 4).steps, ring.steps);
  }
  EXPECT_DOUBLE_EQ(hop_pattern(AllreduceAlgo::star, 1000, 1).steps, 0.0);
  EXPECT_DOUBLE_EQ(hop_pattern(AllreduceAlgo::ring, 1000, 1).link_bytes(), 0.0);
  // The time the link emulation holds for is the pattern's, times the dilation.
  LinkModel link = parse_link("50:1.25");
  link.dilation = 3.0;
  for (int k : {2, 3, 4, 8}) {
    for (AllreduceAlgo a : {AllreduceAlgo::ring, AllreduceAlgo::star, AllreduceAlgo::native}) {
      const double want = 3.0 * hop_pattern(a, 1 << 20, k).seconds(50e-6, 1.25e9);
      EXPECT_NEAR(modelled_seconds(a, link, size_t{1} << 20, k), want, 1e-12 * want) << allreduce_algo_name(a) << " K=" << k;
    }
  }
}

// Textbook 15.2, Code 15.2.1: 2 GB of fp16 gradients over 8 GPUs — 11.68 ms on NVSwitch
// (300 GB/s, 1 µs), 280.07 ms on InfiniBand (12.5 GB/s, 5 µs).
TEST(LinkModelTime, MatchesTheTextbook) {
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, parse_link("1:300"), 2'000'000'000, 8), 11.68e-3, 0.005e-3);
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::ring, parse_link("ib100"), 2'000'000'000, 8), 280.07e-3, 0.005e-3);
  EXPECT_EQ(modelled_seconds(AllreduceAlgo::native, parse_link("ib100"), 1 << 20, 4),
            modelled_seconds(AllreduceAlgo::ring, parse_link("ib100"), 1 << 20, 4));
  // Star: 2(K-1) whole buffers through rank 0's link.
  EXPECT_NEAR(modelled_seconds(AllreduceAlgo::star, parse_link("ib100"), 2'000'000'000, 8),
              14 * (5e-6 + 2e9 / 12.5e9), 1e-12);
  EXPECT_EQ(modelled_seconds(AllreduceAlgo::star, LinkModel{}, 1 << 20, 4), 0.0);  // --link none
}

TEST(AllreduceAlgoNames, RoundTripAndRejectUnknown) {
  for (AllreduceAlgo a : {AllreduceAlgo::native, AllreduceAlgo::ring, AllreduceAlgo::star}) {
    EXPECT_EQ(parse_allreduce_algo(allreduce_algo_name(a)), a);
  }
  EXPECT_THROW(parse_allreduce_algo("tree"), InputError);
  EXPECT_THROW(parse_allreduce_algo(""), InputError);
}

TEST(BenchSizes, ParseWithSuffixes) {
  EXPECT_EQ(bench::parse_size("8", "-b"), 8u);
  EXPECT_EQ(bench::parse_size("1K", "-b"), 1024u);
  EXPECT_EQ(bench::parse_size("256M", "-e"), size_t{256} << 20);
  EXPECT_EQ(bench::parse_size("256m", "-e"), size_t{256} << 20);
  EXPECT_EQ(bench::parse_size("1G", "-e"), size_t{1} << 30);
  for (const char* bad : {"", "-1", "1X", "K", "1.5M", "8 ", "1KB", "99999999999999999999", "2048G"}) {
    EXPECT_THROW(bench::parse_size(bad, "-b"), InputError) << "'" << bad << "'";
  }
}

// argv as a mutable array the way main() gets it.
struct Argv {
  explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(args.size());
  }
  std::vector<std::string> rest() const { return {ptrs.begin(), ptrs.begin() + argc}; }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
  int argc;
};

TEST(BenchOptions, TakesOursLeavesTheLibrarys) {
  Argv a({"bench_allreduce", "-b", "1M", "-e64M", "--stepfactor=4", "-c", "--benchmark_filter=ring", "-n", "3",
          "--algos", "ring,star", "--benchmark_format=json"});
  const AllreduceBenchOptions o = bench::take_allreduce_options(a.argc, a.ptrs.data());
  EXPECT_EQ(o.min_bytes, size_t{1} << 20);
  EXPECT_EQ(o.max_bytes, size_t{64} << 20);
  EXPECT_EQ(o.factor, 4);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.algos, (std::vector<std::string>{"ring", "star"}));
  EXPECT_FALSE(o.link.enabled());
  EXPECT_EQ(a.rest(), (std::vector<std::string>{"bench_allreduce", "--benchmark_filter=ring", "--benchmark_format=json"}));
  EXPECT_EQ(a.ptrs[a.argc], nullptr);
}

// bench_args.h: a switch is taken out wherever it stands, every copy of it, and nothing else;
// a flag's value is the last one given.
TEST(BenchArgs, SwitchAndFlagTakenOutOfArgv) {
  Argv a({"bench_step", "--tf32", "--models=large", "--benchmark_filter=parts", "--tf32", "--tf32x", "--batch", "64",
          "--batch=128"});
  EXPECT_TRUE(bench::take_switch(a.argc, a.ptrs.data(), "--tf32"));
  EXPECT_EQ(bench::take_flag(a.argc, a.ptrs.data(), "--batch"), "128");
  EXPECT_EQ(a.rest(), (std::vector<std::string>{"bench_step", "--models=large", "--benchmark_filter=parts", "--tf32x"}));
  EXPECT_EQ(a.ptrs[a.argc], nullptr);
  EXPECT_FALSE(bench::take_switch(a.argc, a.ptrs.data(), "--tf32"));
  EXPECT_EQ(a.argc, 4);
}

// The median's 95% interval from order statistics: at n = 100 the 40th and 61st values (the
// tables' ranks), whatever order the sample came in; the median inside it; one value alone is its
// own interval; a small sample's is its whole range.
TEST(BenchArgs, MedianIntervalIsTheOrderStatistics) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // x(r) = r
  const bench::MedianInterval ci = bench::median_interval(v);
  EXPECT_EQ(ci.lo, 40.0);
  EXPECT_EQ(ci.hi, 61.0);
  EXPECT_EQ(median(v), 50.5);
  // Values that are not their ranks (x(r) = r²): an interval built from values around the median
  // (50.5 ± 10.5) instead of from ranks would give 1600 and 3721 only by accident.
  std::vector<double> sq;
  for (int i = 1; i <= 100; ++i) sq.push_back(static_cast<double>(i) * i);
  const bench::MedianInterval sq_ci = bench::median_interval(sq);
  EXPECT_EQ(sq_ci.lo, 1600.0);
  EXPECT_EQ(sq_ci.hi, 3721.0);
  const bench::MedianInterval one = bench::median_interval({0.98});
  EXPECT_EQ(one.lo, 0.98);
  EXPECT_EQ(one.hi, 0.98);
  const bench::MedianInterval five = bench::median_interval({3.0, 1.0, 5.0, 2.0, 4.0});
  EXPECT_EQ(five.lo, 1.0);
  EXPECT_EQ(five.hi, 5.0);
}

// core/median.h: the middle value of an odd count, the mean of the middle two of an even one
// (not the upper or the lower of them), whatever the order; 0 for none.
TEST(CoreMedian, MiddleOrMeanOfTheMiddleTwo) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(median({7.0}), 7.0);
  EXPECT_EQ(median({}), 0.0);
}

TEST(BenchOptions, LinkEmulation) {
  Argv a({"x", "--link", "ib100"}), b({"x", "--link=5:12.5"});
  const LinkModel ib = bench::take_allreduce_options(a.argc, a.ptrs.data()).link;
  const LinkModel custom = bench::take_allreduce_options(b.argc, b.ptrs.data()).link;
  EXPECT_EQ(ib.name, "ib100");
  EXPECT_EQ(custom.name, "custom");
  EXPECT_DOUBLE_EQ(ib.ring_seconds(1 << 20, 4), custom.ring_seconds(1 << 20, 4));
}

TEST(BenchOptions, CheckTakesAnOptionalZeroOrOne) {
  Argv on({"x", "-c", "1", "-w", "0"}), off({"x", "-c", "0"}), bare({"x", "-c", "-b", "16"});
  const AllreduceBenchOptions o = bench::take_allreduce_options(on.argc, on.ptrs.data());
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(on.argc, 1);
  EXPECT_FALSE(bench::take_allreduce_options(off.argc, off.ptrs.data()).check);
  const AllreduceBenchOptions b = bench::take_allreduce_options(bare.argc, bare.ptrs.data());
  EXPECT_TRUE(b.check);
  EXPECT_EQ(b.min_bytes, 16u);
}

TEST(BenchOptions, RejectsBadCombinations) {
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"x", "-b", "2"},                 // less than one float
           {"x", "-b", "1M", "-e", "1K"},    // max < min
           {"x", "-f", "1"},                 // would never grow
           {"x", "-n", "0"},                 // no iterations
           {"x", "--algos", "ring,tree"},    // unknown algorithm
           {"x", "-b"},                      // missing value
           {"x", "-e", "--benchmark_filter=x"},
           {"x", "--link", "warp9"},           // unknown link
           {"x", "--link", "ib100", "--algos", "ring,nccl"},  // NCCL uses the real link
       }) {
    Argv a(bad);
    EXPECT_THROW(bench::take_allreduce_options(a.argc, a.ptrs.data()), InputError) << bad.back();
  }
}

TEST(BenchSweep, DefaultIsEightBytesTo256MDoubling) {
  const std::vector<size_t> s = bench::sweep_sizes(AllreduceBenchOptions{});
  ASSERT_EQ(s.size(), 26u);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), size_t{256} << 20);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_EQ(s[i], 2 * s[i - 1]);
}

TEST(BenchSweep, IncrementAndRoundingToWholeFloats) {
  AllreduceBenchOptions o;
  o.min_bytes = 10, o.max_bytes = 40, o.factor = 2;
  EXPECT_EQ(bench::sweep_sizes(o), (std::vector<size_t>{8, 20, 40}));
  o.step_bytes = 12;
  EXPECT_EQ(bench::sweep_sizes(o), (std::vector<size_t>{8, 20, 32}));
}

TEST(BenchSweep, IterationsFixedPerSize) {
  AllreduceBenchOptions o;
  EXPECT_EQ(bench::iterations_for(o, 8), 200);
  EXPECT_EQ(bench::iterations_for(o, size_t{4} << 20), 64);
  EXPECT_EQ(bench::iterations_for(o, size_t{256} << 20), 5);
  EXPECT_EQ(bench::warmup_for(o, 8), 10);
  EXPECT_EQ(bench::warmup_for(o, size_t{256} << 20), 1);
  o.iters = 7, o.warmup = 0;
  EXPECT_EQ(bench::iterations_for(o, 8), 7);
  EXPECT_EQ(bench::warmup_for(o, 8), 0);
}

// The nccl-tests shape: '#' on every non-data line, one data row per size, the median of
// repeated runs, and "# Avg bus bandwidth" closing it.
TEST(BenchTable, NcclTestsShape) {
  bench::AllreduceTable table(2, {"native", "ring"});
  table.add("ring", {1024, 256, 1e-6, 1024, 0});
  table.add("ring", {1024, 256, 3e-6, 1024, 0});
  table.add("ring", {1024, 256, 2e-6, 1024, 0});  // median 2 µs: algbw 0.512 GB/s
  table.add("native", {1024, 256, 1.024e-6, 1024, -1});
  table.add("native", {2048, 512, 2.048e-6, 2048, -1});
  EXPECT_NEAR(table.avg_busbw("ring"), 0.512, 1e-12);
  EXPECT_NEAR(table.avg_busbw("native"), 1.0, 1e-12);
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  table.print(f, {"# banner"});
  std::fclose(f);
  std::vector<std::string> lines;
  for (size_t start = 0; start < len;) {
    size_t nl = std::string(text).find('\n', start);
    lines.push_back(std::string(text + start, nl - start));
    start = nl + 1;
  }
  free(text);
  int data_rows = 0;
  for (const std::string& l : lines) {
    if (l.empty() || l[0] != '#') ++data_rows;
  }
  EXPECT_EQ(data_rows, 2);  // 1024 and 2048 bytes
  EXPECT_EQ(lines.front(), "# banner");
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[lines.size() - 2].rfind("# Avg bus bandwidth", 0), 0u) << lines[lines.size() - 2];
  EXPECT_NE(lines[lines.size() - 3].find("# Out of bounds values : 0 OK"), std::string::npos);
  EXPECT_EQ(table.total_wrong(), 0);
}

// The collapse warning: a size whose busbw is below half of the best smaller size's is named,
// once per such size; a dip to just above half (and the first size) is not.
TEST(BenchTable, CollapseWarning) {
  bench::AllreduceTable table(2, {"native", "ring"});
  // K = 2: busbw = algbw = bytes / s / 1e9.
  table.add("native", {1000, 250, 1e-6, 1000, -1});   // 1.0 GB/s
  table.add("native", {2000, 500, 1e-6, 2000, -1});   // 2.0 GB/s (best)
  table.add("native", {4000, 1000, 4e-6, 4000, -1});  // 1.0 GB/s: half, not below: no warning
  table.add("native", {8000, 2000, 8.1e-6, 8000, -1});  // 0.988 GB/s: below half of 2.0
  table.add("ring", {1000, 250, 1e-6, 1000, -1});
  table.add("ring", {2000, 500, 1.5e-6, 2000, -1});  // 1.33 of 1.0: fine
  const auto w = table.collapse_warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("native busbw 0.988 GB/s at 8000 B"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("(2.000 GB/s at 2000 B)"), std::string::npos) << w[0];
  EXPECT_EQ(w[0].rfind("# WARNING", 0), 0u);
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  table.print(f, {});
  std::fclose(f);
  const std::string out(text, len);
  free(text);
  EXPECT_NE(out.find(w[0]), std::string::npos) << "the warning is not in the printed table";
}

// A wait for all-reduce #w names the first not-done one of #w and those before it; never a
// later launch, which the host is not waiting for. Seen by a Work's wait while later
// all-reduces are queued: #3 done, #4 and #5 running, a wait for #3 that has not yet seen it.
TEST(InFlightNaming, AWaitNamesItsOwnAllreduceNotALaterLaunch) {
  const std::vector<InFlight> q = {{1, true}, {2, true}, {3, true}, {4, false}, {5, false}};
  EXPECT_EQ(holding_up(q, 3), std::nullopt) << "#3 and before are done: the wait names #3 itself";
  // The step's drain waits for the latest launch: the first not done is #4.
  ASSERT_TRUE(holding_up(q, 5).has_value());
  EXPECT_EQ(q[*holding_up(q, 5)].seq, 4u);
  // FIFO: a wait for #3 is held up by an earlier #2 that has not finished.
  const std::vector<InFlight> r = {{1, true}, {2, false}, {3, false}, {4, false}};
  ASSERT_TRUE(holding_up(r, 3).has_value());
  EXPECT_EQ(r[*holding_up(r, 3)].seq, 2u);
  EXPECT_EQ(holding_up({}, 7), std::nullopt);
}

// Naive's batch with the call log off: only its last call has an end event, and the calls before
// it are done exactly when it is — a wait for the batch names its first call until then.
TEST(InFlightNaming, CallsWithoutAnEndEventTakeTheNextTimedOnes) {
  // #1 timed and done; #2, #3 untimed; #4 timed, running.
  std::vector<Queued> q = {{1, true, true}, {2, false, false}, {3, false, false}, {4, true, false}};
  std::vector<InFlight> f = in_flight_of(q);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_TRUE(f[0].done);
  EXPECT_FALSE(f[1].done);
  EXPECT_FALSE(f[2].done);
  EXPECT_FALSE(f[3].done);
  ASSERT_TRUE(holding_up(f, 4).has_value());
  EXPECT_EQ(f[*holding_up(f, 4)].seq, 2u) << "the batch's first call, not its last";
  // #4 fired: the whole batch is done, whatever an untimed call's own (unread) flag says.
  q[3].end_fired = true;
  q[1].end_fired = false;
  f = in_flight_of(q);
  for (const InFlight& x : f) EXPECT_TRUE(x.done) << "#" << x.seq;
  EXPECT_EQ(holding_up(f, 4), std::nullopt);
  // An untimed call with no timed one after it is never taken as done.
  f = in_flight_of({{7, true, true}, {8, false, true}});
  EXPECT_TRUE(f[0].done);
  EXPECT_FALSE(f[1].done);
  EXPECT_EQ(f[0].seq, 7u);
  EXPECT_EQ(f[1].seq, 8u);
}

// --share-gpu: every rank a host of its own for NCCL (distinct NCCL_HOSTID, so NCCL's one rank
// per GPU and host check passes), all of them talking over the socket transport on loopback,
// with the transports that map one GPU's memory into another process switched off.
TEST(NcclSharedGpu, EveryRankItsOwnHostOverLoopbackSockets) {
  std::set<std::string> hostids;
  for (int rank = 0; rank < 4; ++rank) {
    std::map<std::string, std::string> env;
    for (const auto& [k, v] : nccl_shared_gpu_env(rank, "node7")) env[k] = v;
    hostids.insert(env.at("NCCL_HOSTID"));
    EXPECT_NE(env.at("NCCL_HOSTID").find("node7"), std::string::npos);
    EXPECT_EQ(env.at("NCCL_NET"), "Socket");
    EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "lo");
    EXPECT_EQ(env.at("NCCL_IB_DISABLE"), "1");
    EXPECT_EQ(env.at("NCCL_P2P_DISABLE"), "1");
    EXPECT_EQ(env.at("NCCL_SHM_DISABLE"), "1");
    EXPECT_EQ(env.at("NCCL_NVLS_ENABLE"), "0");
    EXPECT_EQ(env.at("NCCL_MNNVL_ENABLE"), "0");
  }
  EXPECT_EQ(hostids.size(), 4u) << "two ranks with one NCCL host would be refused as one GPU twice";
  // Applied in this process, overwriting what was there (the transport is the option's point).
  ::setenv("NCCL_SOCKET_IFNAME", "eth0", 1);
  apply_nccl_shared_gpu_env(3);
  EXPECT_STREQ(std::getenv("NCCL_SOCKET_IFNAME"), "lo");
  EXPECT_NE(std::string(std::getenv("NCCL_HOSTID")).find("rank3"), std::string::npos);
}

}  // namespace
}  // namespace dpscale
