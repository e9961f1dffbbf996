// test_point_apart.cpp — two runs that differ in one measured option only (the gradients' wire
// format, the accumulation, the placement) are two points in every judge of runs: predict's
// validation (through the binary, as a user runs it), compare's gate document, ab's paired
// points and the history's rows. Each keeps its own runs and is measured against the single run
// of its own point, as the gate pairs.
//
// Each pair is made with epochs far apart (the variant B twice as fast over its single run as
// A's 4/3), so a judge that merged the two would show the median of both, or one point of six
// runs. Negative control: the same files with B's runs written without the flag that makes them
// B (the run lost its setting) must merge into one point in each judge, so the checks tell the
// points apart by the setting and not by their times.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ab_files.h"
#include "core/median.h"
#include "harness/ab/ab_judge.h"
#include "harness/history/history_rows.h"
#include "harness/report/gate.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using nlohmann::json;

constexpr int kRounds = 3;
constexpr double kSingleEpoch = 2.0, kEpochA = 1.5, kEpochB = 1.0;  // speedups 4/3 and 2
constexpr double kBFaster = 1.1;  // ab: build B's runs of variant B 10% more throughput

// One option's two values: A at the option's default, B away from it; the single runs each pairs
// with (the same one where a single run does not take the option).
struct Case {
  std::string name;
  SweepRun a, b, single_a, single_b;
  double single_b_epoch = kSingleEpoch;
  std::function<void(const Point&, RunRecord&)> fill;  // the record's fields of the setting
};

SweepRun run_of(ModeRef mode, int k, std::vector<std::string> flags, std::vector<std::string> swept, int nodes = 0,
                int rpn = 0) {
  SweepRun r;
  r.args = {"--model", "small"};
  r.args.insert(r.args.end(), flags.begin(), flags.end());
  r.point = Point::of_args("small", mode, k, r.args, nodes, rpn);
  r.swept = std::move(swept);
  return r;
}

Case grad_comm() {
  Case c{"grad_comm",
         run_of(Mode::naive, 2, {}, {"grad_comm"}),
         run_of(Mode::naive, 2, {"--grad-comm", "bf16"}, {"grad_comm"}),
         run_of(Mode::single, 1, {}, {}),
         run_of(Mode::single, 1, {}, {}),
         kSingleEpoch,
         [](const Point& p, RunRecord& r) { r.grad_comm = p.setting("grad_comm"); }};
  return c;
}

// A single run takes --accum-steps: B pairs with the single run that accumulates too (3x slower).
Case accumulation() {
  Case c{"accum_steps",
         run_of(Mode::naive, 2, {}, {"accum_steps"}),
         run_of(Mode::naive, 2, {"--accum-steps", "4"}, {"accum_steps"}),
         run_of(Mode::single, 1, {}, {"accum_steps"}),
         run_of(Mode::single, 1, {"--accum-steps", "4"}, {"accum_steps"}),
         3 * kSingleEpoch,
         [](const Point& p, RunRecord& r) { r.accum_steps = std::stoi(p.setting("accum_steps")); }};
  return c;
}

Case placement() {
  Case c{"placement",
         run_of(Mode::naive, 2, {}, {}, 1, 2),
         run_of(Mode::naive, 2, {}, {}, 2, 1),
         run_of(Mode::single, 1, {}, {}),
         run_of(Mode::single, 1, {}, {}),
         kSingleEpoch,
         [](const Point& p, RunRecord& r) {
           if (p.nodes == 0) return;  // the single run: no placement
           r.n_nodes = p.nodes;
           r.ranks_per_node = p.ranks_per_node;
         }};
  return c;
}

// B's epoch: twice as fast as the single run it pairs with (B's single may be slower than A's).
double epoch_b(const Case& c) { return kEpochB * c.single_b_epoch / kSingleEpoch; }

// The rounds of a file: each round the single runs, then A, then B. `b_as_a` (the negative
// control): B's runs lose their setting, so they are written as A's runs (and B's single runs as
// A's), in rounds of their own after A's; `b_faster`: B's epochs divided by it (ab's build B).
std::string file_of(const Case& c, bool b_as_a = false, double b_faster = 1) {
  std::string text;
  auto line = [&](const SweepRun& as, double epoch, int round) {
    SweepRun run = as;
    run.repeat = round;
    return test::timed_line(run, epoch, 0.01, [&](RunRecord& r) { c.fill(as.point, r); });
  };
  for (int round = 0; round < kRounds; ++round) {
    const int b_round = b_as_a ? kRounds + round : round;
    text += line(c.single_a, kSingleEpoch, round);
    if (b_as_a) text += line(c.single_a, c.single_b_epoch, b_round);
    if (!b_as_a && !(c.single_b.point == c.single_a.point)) text += line(c.single_b, c.single_b_epoch, round);
    text += line(c.a, kEpochA, round);
    text += line(b_as_a ? c.a : c.b, epoch_b(c) / b_faster, b_round);
  }
  return text;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  test::write_file(path, text);
  return path;
}

// The judges' points of A and B, each read from its own key.
struct Seen {
  size_t points = 0;                     // data-parallel points the judge shows
  std::map<std::string, double> value;   // "a" / "b": the figure the judge gives the point
  std::map<std::string, size_t> runs;    // "a" / "b": the samples (runs, pairs) it has of it
};

std::string which(const Case& c, const Point& k) { return k == c.a.point ? "a" : k == c.b.point ? "b" : "?"; }

// predict --validate through the binary: its data-parallel points and each one's measured epoch;
// the single epoch each was measured against in `single`.
Seen predict_validate(const Case& c, const std::string& path, std::map<std::string, double>* single = nullptr) {
  const ProcessResult r = test::dpscale({"predict", "--validate", path, "--format", "json"});
  Seen s;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return s;
  const json j = json::parse(r.out);
  s.points = j["points"].size();
  for (const json& p : j["points"]) {
    if (!p.contains("point")) continue;
    const std::string w = which(c, Point::from_json(p["point"]));
    s.value[w] = p["measured_epoch_s"].get<double>();
    s.runs[w] = p["runs"].get<size_t>();
    if (single) (*single)[w] = p["single_epoch_s"].get<double>();
  }
  return s;
}

// compare's gate document, NEW and BASE the same rounds: each point's median paired speedup.
Seen compare_points(const Case& c, const std::string& text) {
  GateFiles f;
  f.now_path = "now.jsonl";
  f.now = parse_results(text, "now.jsonl");
  f.bases = {parse_results(text, "base.jsonl")};
  const json doc = gate_document(f, GateOptions{});
  Seen s;
  for (const json& p : doc["points"]) {
    const Point k = Point::from_json(p["key"]);
    if (!k.mode->data_parallel) continue;
    ++s.points;
    EXPECT_EQ(p["status"], "compared") << p.dump();
    const std::vector<double> samples = p["now"]["samples"];
    s.value[which(c, k)] = samples.empty() ? 0 : median(samples);
    s.runs[which(c, k)] = samples.size();
  }
  return s;
}

// ab's paired speedup points (B's file with variant B 10% faster): each point's median ratio.
Seen ab_points(const Case& c, const std::string& a_text, const std::string& b_text) {
  const json pts = speedup_points(parse_results(a_text, "a.jsonl"), parse_results(b_text, "b.jsonl"), GateOptions{});
  Seen s;
  for (const json& p : pts) {
    const Point k = Point::from_json(p["key"]);
    ++s.points;
    const std::vector<double> ratios = p["pairs"]["ratios"];
    s.value[which(c, k)] = ratios.empty() ? 0 : median(ratios);
    s.runs[which(c, k)] = ratios.size();
  }
  return s;
}

// The history's rows: the data-parallel point keys, and each one's median speedup.
Seen history_points(const Case& c, const std::string& text) {
  const std::vector<json> rows = history::rows_of(parse_results(text, "h.jsonl"), history::Revision{"r1", "", ""});
  std::map<std::string, std::vector<double>> by_key;
  for (const json& r : rows) {
    if (r["metrics"]["speedup"].is_null()) continue;  // single runs pair with nothing
    by_key[r["point_key"].get<std::string>()].push_back(r["metrics"]["speedup"].get<double>());
  }
  Seen s;
  s.points = by_key.size();
  for (const auto& [key, v] : by_key) {
    const std::string w = key == c.a.point.history_key() ? "a" : key == c.b.point.history_key() ? "b" : "?";
    s.value[w] = median(v);
    s.runs[w] = v.size();
  }
  return s;
}

void expect_apart(const Case& c) {
  SCOPED_TRACE(c.name);
  ASSERT_FALSE(c.a.point == c.b.point);
  const std::string text = file_of(c);
  const double speedup_a = kSingleEpoch / kEpochA, speedup_b = kSingleEpoch / kEpochB;
  const std::map<std::string, size_t> each_its_rounds = {{"a", kRounds}, {"b", kRounds}};

  std::map<std::string, double> single;
  const Seen pv = predict_validate(c, temp_file("apart-" + c.name + ".jsonl", text), &single);
  ASSERT_EQ(pv.points, 2u) << "predict --validate merged the two points";
  EXPECT_EQ(pv.runs, each_its_rounds);
  EXPECT_DOUBLE_EQ(pv.value.at("a"), kEpochA);
  EXPECT_DOUBLE_EQ(pv.value.at("b"), epoch_b(c));
  // Each against the single run of its own point: B's accumulating single run is 3x A's.
  EXPECT_NEAR(single.at("b") / single.at("a"), c.single_b_epoch / kSingleEpoch, 1e-9);

  const Seen cp = compare_points(c, text);
  ASSERT_EQ(cp.points, 2u) << "compare merged the two points";
  EXPECT_EQ(cp.runs, each_its_rounds);
  EXPECT_NEAR(cp.value.at("a"), speedup_a, 1e-9);
  EXPECT_NEAR(cp.value.at("b"), speedup_b, 1e-9);

  const Seen ab = ab_points(c, text, file_of(c, false, kBFaster));
  ASSERT_EQ(ab.points, 2u) << "ab merged the two points";
  EXPECT_EQ(ab.runs, each_its_rounds);
  EXPECT_NEAR(ab.value.at("a"), 1.0, 1e-9);
  EXPECT_NEAR(ab.value.at("b"), kBFaster, 1e-9);

  const Seen h = history_points(c, text);
  ASSERT_EQ(h.points, 2u) << "the history merged the two points";
  EXPECT_EQ(h.runs, each_its_rounds);
  EXPECT_NEAR(h.value.at("a"), speedup_a, 1e-9);
  EXPECT_NEAR(h.value.at("b"), speedup_b, 1e-9);
}

// The negative control: B's runs written with A's point are repeats of A in every judge.
void expect_merged_without_the_setting(const Case& c) {
  SCOPED_TRACE(c.name + " written without its setting");
  const std::string text = file_of(c, true);
  const std::map<std::string, size_t> one_point_of_both = {{"a", 2 * kRounds}};
  EXPECT_EQ(predict_validate(c, temp_file("merged-" + c.name + ".jsonl", text)).runs, one_point_of_both);
  EXPECT_EQ(compare_points(c, text).runs, one_point_of_both);
  EXPECT_EQ(ab_points(c, text, file_of(c, true, kBFaster)).runs, one_point_of_both);
  EXPECT_EQ(history_points(c, text).runs, one_point_of_both);
}

TEST(PointApart, RunsThatDifferInTheWireFormatOnlyAreTwoPointsInEveryJudge) { expect_apart(grad_comm()); }
TEST(PointApart, RunsThatDifferInAccumulationOnlyAreTwoPointsEachWithItsOwnSingleRun) { expect_apart(accumulation()); }
TEST(PointApart, RunsThatDifferInPlacementOnlyAreTwoPointsInEveryJudge) { expect_apart(placement()); }

TEST(PointApart, WithoutTheSettingTheSameRunsAreOnePoint) {
  for (const Case& c : {grad_comm(), accumulation(), placement()}) expect_merged_without_the_setting(c);
}

}  // namespace
}  // namespace dpscale
