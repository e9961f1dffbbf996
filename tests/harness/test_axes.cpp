// test_axes.cpp — option axes and the derived point key (harness/point/point.h): two runs
// that differ only in one swept option are two points of the report, every option the table
// flags as changing the measurement is in the key, the committed CI baseline still matches the
// CI config's points, and an axis value a trainer would refuse is refused before anything runs.
//
// Run: ctest -R HarnessAxes --output-on-failure
#include <gtest/gtest.h>

#include "harness/report/analysis.h"
#include "harness/report/report.h"
#include "harness/results/results_file.h"
#include "harness_util.h"

namespace dpscale {
namespace {

// A sweep line for point `p` of config `c`, with the command line the sweep would have run.
std::string line_for(const SweepConfig& c, const SweepRun& p, double epoch_s) {
  RunInfo info;
  info.config = c.name;
  info.run_id = p.run_id(c.name);
  info.argv = {"mpirun", "-np", std::to_string(p.point.world_size),
               "/bin/" + std::string(p.point.mode->executable)};
  info.argv.insert(info.argv.end(), p.args.begin(), p.args.end());
  return make_sweep_line(p.point, p.repeat, info, {{"host", "h"}}, test::make_record(p, epoch_s, 0.1), "").dump() + "\n";
}

// The config of one axis: `axis` with the two values, bucketed at K = 2 beside a single run.
SweepConfig one_axis(const std::string& axis, const std::string& values) {
  return parse_config(R"({"name": "ax", "models": ["small"], "modes": ["single", "bucketed"], "world_sizes": [2],
                          "backend": "cpu", ")" + axis + "\": " + values + "}",
                      "ax.json");
}

struct AxisCase {
  std::string axis, values, key;
};

TEST(HarnessAxes, TwoValuesOfEachAxisAreTwoPoints) {
  const std::vector<AxisCase> cases = {{"bucket_caps_mb", "[1, 4]", "Cap MB"},
                                       {"accum_steps", "[1, 4]", "accum_steps"},
                                       {"grad_comm", R"(["fp32", "bf16"])", "grad_comm"},
                                       {"bucket_rule", R"(["strict", "ddp"])", "bucket_rule"},
                                       {"allreduces", R"(["native", "ring"])", "allreduce"},
                                       {"tf32", "[false, true]", "tf32"}};
  for (const AxisCase& ac : cases) {
    SCOPED_TRACE(ac.axis);
    const SweepConfig c = one_axis(ac.axis, ac.values);
    std::string text;
    for (const SweepRun& p : expand(c, 2)) text += line_for(c, p, p.point.mode == Mode::single ? 2.0 : 1.5);
    const Analysis a = analyse(parse_results(text, "ax.jsonl"));
    int dp = 0;
    for (const PointStats& s : a.points) {
      if (s.point.mode != Mode::bucketed) continue;
      ++dp;
      EXPECT_EQ(s.runs, 2) << s.point.describe();   // the repeats of one value, not the other's
      EXPECT_TRUE(s.speedup.has_value()) << s.point.describe() << ": no single run found for it";
    }
    EXPECT_EQ(dp, 2) << "runs differing only in " << ac.axis << " were merged";
    const std::string md = render_report(a, "ax.jsonl", "md");
    const std::string header = md.substr(md.find("| Model"), md.find('\n', md.find("| Model")) - md.find("| Model"));
    EXPECT_NE(header.find(" " + ac.key + " |"), std::string::npos) << md;  // a column, as the sweep varies it
  }
}

TEST(HarnessAxes, NoColumnForASettingThePointsShare) {
  const SweepConfig c = one_axis("grad_comm", R"(["bf16"])");
  std::string text;
  for (const SweepRun& p : expand(c, 1)) text += line_for(c, p, 1.0);
  const std::string md = render_report(analyse(parse_results(text, "ax.jsonl")), "ax.jsonl", "md");
  EXPECT_EQ(md.find(" grad_comm |"), std::string::npos) << md;
}

// A value of option `t` other than its default that its parser takes, from candidates per
// kind; "" when none fits (the test then names the option: give it a candidate).
std::string other_value(const TrainerOption& t) {
  const TrainOptions defaults;
  const std::string def = t.get(defaults);
  const std::vector<std::string> candidates = {"2", "3", "0.5", "0.25", "true", "ring", "bf16", "ddp", "npy", "cpu",
                                               "eth10", "784,64,10", "1:10", "3:4", "x.npy", "blis", "adamw", "1"};
  for (const std::string& v : candidates) {
    TrainOptions o;
    try {
      t.set(o, v);
    } catch (const std::exception&) {
      continue;
    }
    if (t.get(o) != def) return v;
  }
  return "";
}

TEST(HarnessAxes, TheKeyHoldsEveryMeasuredOptionOfTheTable) {
  // Iterates the table: an option flagged as changing the measurement that the key missed
  // would leave two of these keys equal. Each is given to a mode that takes it.
  int measured = 0;
  for (const TrainerOption& t : trainer_options()) {
    if (!t.measured) continue;
    ++measured;
    SCOPED_TRACE(t.key);
    const std::string v = other_value(t);
    ASSERT_FALSE(v.empty()) << "no candidate value for " << t.key << " in this test";
    const Mode mode = t.modes.back();
    const Point base = Point::of_args("small", mode, 2, {});
    std::vector<std::string> args = {t.flag};
    if (t.kind != ValueKind::switch_) args.push_back(v);
    const Point p = Point::of_args(t.key == "model" ? v : "small", mode, 2, args);
    EXPECT_NE(p, base) << t.key << " " << v << " is not in the point key";
    // A mode that does not take it runs without it: the same point as without the flag.
    for (const ModeInfo& m : all_modes()) {
      if (t.accepted_by(m.mode) || t.key == "model") continue;
      EXPECT_EQ(Point::of_args("small", m.mode, 2, args), Point::of_args("small", m.mode, 2, {})) << m.name;
    }
  }
  EXPECT_GT(measured, 20);
  // And an unmeasured option (where the trace goes) changes no key.
  const Point base = Point::of_args("small", Mode::bucketed, 2, {});
  EXPECT_EQ(Point::of_args("small", Mode::bucketed, 2, {"--trace", "t.json", "--quiet", "--collective-timeout", "30"}), base);
}

TEST(HarnessAxes, TheCommittedCiBaselineMatchesTheCiConfigsPoints) {
  // Lines written before the key had settings carry argv: their settings come from it, and
  // every option they were not given is at its default, as a fresh CI sweep's would be.
  const SweepConfig c = load_config(test::kSource + "/configs/ci.json");
  const Analysis base = analyse(read_results(test::kSource + "/.ci/baseline/ci-cpu.jsonl"));
  int found = 0;
  for (const SweepRun& p : expand(c, 1)) {
    SCOPED_TRACE(p.point.describe());
    const PointStats* s = base.find(p.point);
    ASSERT_NE(s, nullptr) << "the CI baseline has no point " << p.point.describe();
    if (p.point.mode != Mode::single) {
      EXPECT_TRUE(s->speedup.has_value());
    }
    ++found;
  }
  EXPECT_EQ(found, 4);
  EXPECT_EQ(base.points.size(), 4u);
}

TEST(HarnessAxes, ValuesATrainerRefusesAreRefusedNamingTheKey) {
  const std::string head = R"({"name": "bad", "models": ["small"], "modes": ["naive"], "world_sizes": [2], )";
  struct Bad {
    std::string json, words;
  };
  const std::vector<Bad> bad = {
      {head + R"("accum_steps": [1, 0]})", "'accum_steps[1]'"},
      {head + R"("grad_comm": ["fp32", "bf16"], "allreduces": ["ring", "hier"]})", "'allreduces'"},
      {head + R"("grad_comm": ["bf16"], "allreduces": ["hier"]})", "'grad_comm'"},
      {head + R"("grad_comm": ["fp8"]})", "'grad_comm[0]'"},
      {head + R"("allreduces": ["ring", "ring"]})", "'allreduces[1]'"},
      {head + R"("tf32": ["yes"]})", "'tf32[0]'"},
      {head + R"("grad_comm": ["bf16"], "options": {"grad_comm": "fp16"}})", "'grad_comm'"},
  };
  test::ScratchDir dir;
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.json);
    EXPECT_THROW(
        {
          try {
            parse_config(b.json, "bad.json");
          } catch (const ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find(b.words), std::string::npos) << e.what();
            throw;
          }
        },
        ConfigError);
  }
  // The command: exit 2, nothing run, nothing written.
  test::write_file(dir.file("bad.json"), bad[1].json);
  const ProcessResult r = test::dpscale({"sweep", dir.file("bad.json"), "--out", dir.file("out.jsonl")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'allreduces'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hier"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
}

TEST(HarnessAxes, AnAxisASingleRunDoesNotTakeRunsTheSingleOnce) {
  const SweepConfig c = one_axis("allreduces", R"(["native", "ring", "star"])");
  int singles = 0, dp = 0;
  for (const SweepRun& p : expand(c, 1)) (p.point.mode == Mode::single ? singles : dp)++;
  EXPECT_EQ(singles, 1);
  EXPECT_EQ(dp, 3);
}

}  // namespace
}  // namespace dpscale
