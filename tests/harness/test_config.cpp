// test_config.cpp — sweep configs: the committed configs expand to the right runs and flags, and
// every kind of bad config is refused with the key's name (exit 2 through the command too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <algorithm>
#include <map>

#include "harness/sweep/config.h"
#include "harness/sweep/world_fit.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::kSource;

std::string arg_after(const std::vector<std::string>& a, const std::string& flag) {
  auto it = std::find(a.begin(), a.end(), flag);
  return it == a.end() || it + 1 == a.end() ? "<absent>" : *(it + 1);
}
bool has(const std::vector<std::string>& a, const std::string& flag) {
  return std::find(a.begin(), a.end(), flag) != a.end();
}

// The values a config sweeps option `key` over, as flag text; none when it is not an axis.
std::vector<std::string> axis_values(const SweepConfig& c, const std::string& key) {
  for (const ConfigAxis& a : c.axes) {
    if (a.option->key == key) return a.values;
  }
  return {};
}

TEST(HarnessConfig, WorkshopIsExactlyTheWorkshops28Runs) {
  const SweepConfig c = load_config(kSource + "/configs/workshop.json");
  const auto runs = expand(c, 1);
  ASSERT_EQ(runs.size(), 28u);
  // Table order: per model, single, then naive/interleaved/bucketed at 2, then at 4.
  const std::vector<std::pair<std::string, int>> order = {{"single", 1},      {"naive", 2}, {"interleaved", 2},
                                                          {"bucketed", 2},    {"naive", 4}, {"interleaved", 4},
                                                          {"bucketed", 4}};
  const std::vector<std::string> models = {"small", "medium", "large", "xlarge"};
  std::set<std::string> ids;
  for (size_t i = 0; i < runs.size(); ++i) {
    const SweepRun& p = runs[i];
    SCOPED_TRACE(p.point.describe());
    EXPECT_EQ(p.point.model, models[i / 7]);
    EXPECT_EQ(p.point.mode.name(), order[i % 7].first);
    EXPECT_EQ(p.point.world_size, order[i % 7].second);
    EXPECT_EQ(p.point.link(), "none");
    ids.insert(p.run_id(c.name));
    const auto a = p.args;
    EXPECT_EQ(arg_after(a, "--model"), p.point.model);
    EXPECT_EQ(arg_after(a, "--samples"), "32768");
    EXPECT_EQ(arg_after(a, "--batch-size"), "1024");
    EXPECT_EQ(arg_after(a, "--lr"), "0.01");
    EXPECT_EQ(arg_after(a, "--epochs"), "5");
    EXPECT_FALSE(has(a, "--link"));  // GPU config: no emulation
    if (p.point.mode == Mode::bucketed) {
      EXPECT_EQ(arg_after(a, "--bucket-cap-mb"), "25");
    } else {
      EXPECT_FALSE(has(a, "--bucket-cap-mb"));
      EXPECT_FALSE(p.point.bucket_cap_mb().has_value());
    }
  }
  EXPECT_EQ(ids.size(), 28u) << "run ids must be unique: --resume keys on them";
  EXPECT_STREQ(mode_named("bucketed").executable, "train_ddp_bucketed");
  EXPECT_STREQ(mode_named("single").executable, "train_single_gpu");
}

TEST(HarnessConfig, CommittedConfigsExpandAsDocumented) {
  const SweepConfig bs = load_config(kSource + "/configs/bucket-sweep.json");
  EXPECT_EQ(axis_values(bs, "bucket_cap_mb"), (std::vector<std::string>{"0.5", "1", "2", "4", "8", "25"}));
  const auto runs = expand(bs, 1);
  std::multiset<double> caps;
  for (const auto& p : runs) {
    if (p.point.bucket_cap_mb()) caps.insert(*p.point.bucket_cap_mb());
  }
  EXPECT_EQ(caps.count(0.5), bs.models.size() * bs.world_sizes.size());
  EXPECT_EQ(arg_after(runs[2].args, "--bucket-cap-mb"), "0.5");  // single, naive, first bucketed

  const SweepConfig cpu = load_config(kSource + "/configs/cpu.json");
  EXPECT_EQ(cpu.backend, "cpu");
  EXPECT_TRUE(std::all_of(cpu.world_sizes.begin(), cpu.world_sizes.end(), [](int k) { return k <= 2; }))
      << "cpu.json must fit a 2-core machine";
  for (const auto& p : expand(cpu, 1)) {
    const auto a = p.args;
    EXPECT_EQ(arg_after(a, "--backend"), "cpu");
    if (p.point.mode == Mode::single) {
      EXPECT_FALSE(has(a, "--link")) << "train_single_gpu has no --link";
    } else {
      EXPECT_EQ(arg_after(a, "--link"), "50:300");
      EXPECT_EQ(arg_after(a, "--link-dilation"), "auto:19.5");
    }
  }
  const SweepConfig ci = load_config(kSource + "/configs/ci.json");
  EXPECT_LE(expand(ci, 1).size(), 6u) << "ci.json must stay tiny";
}

TEST(HarnessConfig, RepeatsAreWholeRoundsWithDistinctIds) {
  const SweepConfig c = parse_config(R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2]})",
                                     "r.json");
  const auto runs = expand(c, 3);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0].repeat, 0);
  EXPECT_EQ(runs[1].repeat, 0);
  EXPECT_EQ(runs[2].repeat, 1);
  EXPECT_STREQ(runs[2].point.mode.name(), "single");
  EXPECT_EQ(runs[0].run_id("r"), "r/small-single-k1-r0");
  EXPECT_EQ(runs[5].run_id("r"), "r/small-naive-k2-r2");
}

TEST(HarnessConfig, OptionsGoOnlyToTheExecutablesThatAcceptThem) {
  const SweepConfig c = parse_config(
      R"({"models": ["784,64,10"], "modes": ["single", "naive", "bucketed"], "world_sizes": [2],
          "bucket_caps_mb": [2], "link": "10:50", "link_dilation": 3,
          "options": {"allreduce": "ring", "first_bucket_mb": 0.5, "fused": true, "tf32": false, "seed": 7}})",
      "o.json");
  const auto runs = expand(c, 1);
  ASSERT_EQ(runs.size(), 3u);
  const auto single = runs[0].args, naive = runs[1].args, bucketed = runs[2].args;
  EXPECT_EQ(arg_after(single, "--seed"), "7");
  EXPECT_FALSE(has(single, "--allreduce"));
  EXPECT_FALSE(has(single, "--fused"));
  EXPECT_FALSE(has(single, "--tf32"));  // false: left out
  EXPECT_EQ(arg_after(naive, "--allreduce"), "ring");
  EXPECT_TRUE(has(naive, "--fused"));
  EXPECT_FALSE(has(naive, "--first-bucket-mb"));
  EXPECT_EQ(arg_after(naive, "--link"), "10:50");
  EXPECT_EQ(arg_after(naive, "--link-dilation"), "3");
  EXPECT_EQ(arg_after(bucketed, "--first-bucket-mb"), "0.5");
  EXPECT_EQ(arg_after(bucketed, "--bucket-cap-mb"), "2");
  EXPECT_FALSE(has(bucketed, "--fused"));
  EXPECT_EQ(runs[1].run_id("o"), "o/784,64,10-naive-k2-10:50-r0");
}

// Each bad config: the message names the key (and the file).
struct BadConfig {
  const char* json;
  const char* must_name;
};

TEST(HarnessConfig, BadConfigsNameTheKey) {
  const std::vector<BadConfig> cases = {
      {R"({"models": ["small"], "modes": ["single"],)", "not valid JSON"},
      {R"([1, 2])", "must be a JSON object"},
      {R"({"models": ["small", "huge"], "modes": ["single"]})", "'models[1]' names an unknown model"},
      {R"({"models": ["small"], "modes": ["single", "turbo"]})", "'modes[1]' names an unknown mode"},
      {R"({"models": ["small"], "modes": ["single"], "colour": "red"})", "'colour' is not a config key"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2, 0]})", "'world_sizes[1]' world size must be at least 1"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [-3]})", "'world_sizes[0]'"},
      {R"({"models": ["small"], "modes": ["bucketed"], "world_sizes": [2], "bucket_caps_mb": [1, 0]})",
       "'bucket_caps_mb[1]' must be a positive number"},
      {R"({"models": ["small"], "modes": ["bucketed"], "world_sizes": [2], "bucket_caps_mb": [-2]})",
       "'bucket_caps_mb[0]' must be a positive number"},
      {R"({"models": ["small"], "modes": ["naive"]})", "'world_sizes' is missing"},
      {R"({"models": ["small"], "modes": ["single"], "options": {"batchsize": 5}})", "'options.batchsize' is not a trainer option"},
      {R"({"models": ["small"], "modes": ["single"], "options": {"epochs": 0}})", "'options.epochs' must be at least 1"},
      {R"({"models": ["small"], "modes": ["single"], "options": {"lr": "fast"}})", "'options.lr' must be a number"},
      {R"({"models": ["small"], "modes": ["single"], "options": {"model": "large"}})", "'options.model' is set by the sweep"},
      {R"({"models": ["small"], "modes": ["single"], "link": "carrier-pigeon"})", "'link'"},
      {R"({"models": ["small"], "modes": ["single"], "link_dilation": "auto:-1"})", "'link_dilation'"},
      {R"({"models": ["small"], "modes": ["single"], "backend": "tpu"})", "'backend'"},
      {R"({"models": [], "modes": ["single"]})", "'models' must be a non-empty array"},
      {R"({"models": ["small"], "modes": ["single"], "repeats": 0})", "'repeats' must be at least 1"},
      {R"({"models": ["small"], "modes": ["single", "single"]})", "'modes[1]' repeats mode"},
      {R"({"models": ["small"], "modes": ["single"], "samples": 100})", "trainer options go inside \"options\""},
  };
  for (const BadConfig& bc : cases) {
    SCOPED_TRACE(bc.json);
    try {
      parse_config(bc.json, "configs/bad.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(bc.must_name), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind("configs/bad.json: ", 0), 0u) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    }
  }
}

TEST(HarnessConfig, TheCommandExits2WithOneLineNamingTheKey) {
  test::ScratchDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{ not json", "not valid JSON"},
      {R"({"models": ["small"], "modes": ["single"], "timeout_s": 1e999})", "a number out of range"},
      {R"({"models": ["giant"], "modes": ["single"]})", "'models[0]'"},
      {R"({"models": ["small"], "modes": ["fast"]})", "'modes[0]'"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [0]})", "'world_sizes[0]'"},
      {R"({"models": ["small"], "modes": ["bucketed"], "world_sizes": [2], "bucket_caps_mb": [0]})", "'bucket_caps_mb[0]'"},
      {R"({"models": ["small"], "modes": ["single"], "nodes": 2})", "'nodes'"},
  };
  for (const auto& [text, key] : cases) {
    SCOPED_TRACE(text);
    const std::string cfg = dir.file("bad.json");
    test::write_file(cfg, text);
    const ProcessResult r = test::dpscale({"sweep", cfg, "--out", dir.file("never.jsonl")});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("never.jsonl"))) << "nothing may run or be written";
  }
  const ProcessResult missing = test::dpscale({"sweep", dir.file("nope.json")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot read the config"), std::string::npos) << missing.err;
}

// Duplicates on any axis, world sizes out of range or not dividing the batch, numbers
// without a bound. Each refusal names the key and the value, on one line.
TEST(HarnessConfig, DuplicatesAndOutOfRangeValuesAreRefused) {
  const std::vector<BadConfig> cases = {
      {R"({"models": ["small", "medium", "small"], "modes": ["single"]})", "'models[2]' repeats model 'small' (models[0])"},
      {R"({"models": ["small", "784,1024,512,256,10"], "modes": ["single"]})",
       "'models[1]' '784,1024,512,256,10' is the same network as models[0] 'small'"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2, 4, 2]})", "'world_sizes[2]' repeats world size 2"},
      {R"({"models": ["small"], "modes": ["bucketed"], "world_sizes": [2], "bucket_caps_mb": [1, 2, 1.0]})",
       "'bucket_caps_mb[2]' repeats bucket_cap_mb 1"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [1000]})",
       "'world_sizes[0]' world size 1000 does not divide the global batch 1024"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2], "options": {"batch_size": 100}, "repeats": 1})", ""},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [8], "options": {"batch_size": 100}})",
       "'world_sizes[0]' world size 8 does not divide the global batch 100"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2048]})",
       "'world_sizes[0]' world size must be at most 1024 (got 2048); allowed 1 to 1024"},
      {R"({"models": ["small"], "modes": ["naive"], "world_sizes": [18446744073709551615]})",
       "'world_sizes[0]' world size must be at most 1024"},
      {R"({"models": ["small"], "modes": ["single"], "repeats": 0})", "'repeats' must be at least 1 (got 0); allowed 1 to 1000"},
      {R"({"models": ["small"], "modes": ["single"], "timeout_s": 1e300})", "'timeout_s' must be at most 604800"},
      {R"({"models": ["small"], "modes": ["single"], "timeout_s": 0})", "'timeout_s' must be a positive number"},
  };
  for (const BadConfig& bc : cases) {
    SCOPED_TRACE(bc.json);
    if (std::string(bc.must_name).empty()) {  // the control: a batch that K divides is fine
      EXPECT_NO_THROW(parse_config(bc.json, "configs/bad.json"));
      continue;
    }
    try {
      parse_config(bc.json, "configs/bad.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(bc.must_name), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    }
  }
  // Negative control: distinct values on every axis are accepted, in order.
  const SweepConfig ok = parse_config(
      R"({"models": ["small", "784,64,10"], "modes": ["bucketed"], "world_sizes": [1, 2, 4], "bucket_caps_mb": [1, 2.5]})",
      "ok.json");
  EXPECT_EQ(ok.world_sizes, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(axis_values(ok, "bucket_cap_mb"), (std::vector<std::string>{"1", "2.5"}));
}

// The sweep's flags: one line, exit 2, the range in the message; and world sizes that do not fit
// this machine (without --hostfile) are refused before anything runs.
TEST(HarnessConfig, SweepFlagsAndWorldSizesOutOfRangeExit2) {
  test::ScratchDir dir;
  const std::string cfg = dir.file("c.json");
  test::write_file(cfg, R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2]})");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--repeats", "0"}, "--repeats: must be at least 1 (got 0); allowed 1 to 1000"},
      {{"--repeats", "1001"}, "--repeats: must be at most 1000 (got 1001); allowed 1 to 1000"},
      {{"--max-world-size", "0"}, "--max-world-size: must be at least 1 (got 0); allowed 1 to 1024"},
      {{"--max-world-size", "-1"}, "--max-world-size: must be at least 1 (got -1)"},
      {{"--timeout", "nan"}, "--timeout: must be a finite number"},
      {{"--timeout", "inf"}, "--timeout: must be a finite number"},
      {{"--timeout", "0"}, "--timeout: must be a positive number"},
      {{"--timeout", "1e9"}, "--timeout: must be at most 604800"},
  };
  for (const auto& [flags, words] : cases) {
    SCOPED_TRACE(flags[0] + " " + flags[1]);
    std::vector<std::string> a = {"sweep", cfg, "--dry-run"};
    a.insert(a.end(), flags.begin(), flags.end());
    const ProcessResult r = test::dpscale(a);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_LT(r.err.size(), 200u) << "no 300-digit ranges: " << r.err;
  }

  // K = 1000 divides a batch of 1000, so the config is fine; this machine is not.
  const int most = max_ranks_here(online_cpus());
  test::write_file(cfg, R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2, 1000],
                            "options": {"batch_size": 1000}})");
  const ProcessResult big = test::dpscale({"sweep", cfg, "--dry-run"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("world size 1000 needs 1000 ranks on this machine"), std::string::npos) << big.err;
  EXPECT_NE(big.err.find("at most " + std::to_string(most)), std::string::npos) << big.err;
  EXPECT_EQ(test::lines_of(big.err).size(), 1u) << big.err;
  // Controls: left out by --max-world-size, or placed by a hostfile with the slots, it is accepted.
  const ProcessResult dropped = test::dpscale({"sweep", cfg, "--dry-run", "--max-world-size", "2"});
  EXPECT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_EQ(test::lines_of(dropped.out).size(), 2u) << dropped.out;
  std::ofstream(dir.file("hosts")) << "node0 slots=500\nnode1 slots=500\n";
  const ProcessResult hosts = test::dpscale({"sweep", cfg, "--dry-run", "--hostfile", dir.file("hosts")});
  EXPECT_EQ(hosts.exit_code, 0) << hosts.err;
  EXPECT_NE(hosts.out.find("-np 1000"), std::string::npos) << hosts.out;
}

TEST(HarnessConfig, FormatNumberReadsBack) {
  EXPECT_EQ(format_number(0.5), "0.5");
  EXPECT_EQ(format_number(25), "25");
  EXPECT_EQ(format_number(0.01), "0.01");
  EXPECT_EQ(std::stod(format_number(1.0 / 3)), 1.0 / 3);
}

// Every run a config expands to is checked with the trainers' own rules before anything runs:
// an --accum-steps whose accumulated step needs more samples than the runs have is refused, in
// the trainer's words, naming the key (it used to start the sweep and fail every such run).
TEST(HarnessConfig, AnAccumulatedStepLargerThanTheSamplesIsRefusedBeforeAnyRun) {
  const std::string base = R"("models": ["small"], "modes": ["single", "naive"], "world_sizes": [2], )";
  for (const auto& [json, says] : std::vector<std::pair<std::string, std::string>>{
           {"{" + base + R"("accum_steps": [1, 64], "options": {"samples": 2048, "batch_size": 1024}})",
            "'options.batch_size', 'accum_steps': the run small single K=1 accum_steps=64 would be refused: --accum-steps 64 x "
            "--batch-size 1024 = 65536 rows per optimizer step, more than the 2048 training samples"},
           {"{" + base + R"("options": {"accum_steps": 3, "batch_size": 1024}})",  // synthetic: 32768 samples
            ""},
           {"{" + base + R"("options": {"accum_steps": 40, "batch_size": 1024}})",
            "'options.batch_size', 'options.accum_steps': the run small single K=1 accum_steps=40 would be refused: --accum-steps 40 x "
            "--batch-size 1024 = 40960 rows per optimizer step, more than the 32768 training samples"},
           {"{" + base + R"("options": {"samples": 512, "batch_size": 1024}})",
            "'options.batch_size': the run small single K=1 would be refused: --batch-size 1024 is larger than the 512 training samples"}}) {
    SCOPED_TRACE(json);
    if (says.empty()) {  // control: an accumulated step that fits
      EXPECT_NO_THROW(parse_config(json, "c.json"));
      continue;
    }
    try {
      parse_config(json, "c.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), "c.json: " + says);
    }
  }
  // Through the command: exit 2, one line, and no results file.
  test::ScratchDir dir;
  test::write_file(dir.file("c.json"), "{" + base + R"("accum_steps": [1, 64], "options": {"samples": 2048}})");
  const ProcessResult r = test::dpscale({"sweep", dir.file("c.json"), "--out", dir.file("out.jsonl")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("'accum_steps'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
}

// One `options` block for an MLP and a transformer: --seq-len (a transformer's) would reach the
// MLP's runs, which the trainers refuse; the sweep refuses the config before any run, in the
// trainers' words. Controls: the transformer alone, and both without seq_len.
TEST(HarnessConfig, AnOptionOfTheOtherKindOfModelIsRefusedBeforeAnyRun) {
  const std::string modes = R"("modes": ["single", "naive"], "world_sizes": [2], )";
  for (const auto& [json, says] : std::vector<std::pair<std::string, std::string>>{
           {"{\"models\": [\"gpt-tiny\", \"small\"], " + modes + R"("options": {"seq_len": 32}})",
            "'model', 'options.seq_len': the run small single K=1 would be refused: --seq-len is a transformer's option; --model "
            "small is an MLP"},
           {"{\"models\": [\"gpt-tiny\"], " + modes + R"("options": {"seq_len": 32}})", ""},
           {"{\"models\": [\"gpt-tiny\", \"small\"], " + modes + R"("options": {"samples": 64, "batch_size": 16}})", ""}}) {
    SCOPED_TRACE(json);
    if (says.empty()) {
      EXPECT_NO_THROW(parse_config(json, "c.json"));
      continue;
    }
    try {
      parse_config(json, "c.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), "c.json: " + says);
    }
  }
}

// A key that no mode of the config takes would be silently ignored — a bucket_rule list without
// a bucketed mode, world sizes without a data-parallel one, "fused" without naive: refused,
// naming the key and the modes that take it. Each with its control (a mode that takes it), and
// one of keys at the value every run has anyway (a template's), which change nothing.
TEST(HarnessConfig, KeysNoModeTakesAreRefusedNotIgnored) {
  for (const auto& [json, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2], "bucket_rule": ["strict", "ddp"]})",
            "'bucket_rule' sweeps an option no mode of this config takes (only bucketed or sharded take it)"},
           {R"({"models": ["small"], "modes": ["single", "bucketed"], "world_sizes": [2], "bucket_rule": ["strict", "ddp"]})", ""},
           {R"({"models": ["small"], "modes": ["single"], "grad_comm": ["fp32", "bf16"]})",
            "'grad_comm' sweeps an option no mode of this config takes (only naive, interleaved, bucketed or sharded take it)"},
           {R"({"models": ["small"], "modes": ["single"], "allreduces": ["ring"]})",
            "'allreduces' sweeps an option no mode of this config takes"},
           {R"({"models": ["small"], "modes": ["single"], "world_sizes": [2, 4]})",
            "'world_sizes' sizes data-parallel runs, but no mode is data-parallel"},
           {R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2, 4]})", ""},
           {R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2], "bucket_caps_mb": [1, 4]})",
            "'bucket_caps_mb' sweeps an option no mode of this config takes (only bucketed or sharded take it)"},
           {R"({"models": ["small"], "modes": ["single"], "link": "pcie4"})",
            "'link' is taken by no mode of this config (only naive, interleaved, bucketed or sharded take it)"},
           {R"({"models": ["small"], "modes": ["single"], "link_dilation": 2})", "'link_dilation' is taken by no mode"},
           {R"({"models": ["small"], "modes": ["single", "bucketed"], "world_sizes": [2], "options": {"fused": true}})",
            "'options.fused' is taken by no mode of this config (only naive take it)"},
           {R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2], "options": {"fused": true}})", ""},
           {R"({"models": ["small"], "modes": ["single"], "options": {"first_bucket_mb": 2}})",
            "'options.first_bucket_mb' is taken by no mode"},
           // Control: keys at the value every run has anyway change nothing (a template's).
           {R"({"models": ["small"], "modes": ["single"], "world_sizes": [1], "bucket_caps_mb": [25], "link": "none",
                "link_dilation": 1, "bucket_rule": ["strict"], "options": {"fused": false, "first_bucket_mb": 1}})", ""}}) {
    SCOPED_TRACE(json);
    if (says.empty()) {
      EXPECT_NO_THROW(parse_config(json, "c.json"));
      continue;
    }
    try {
      parse_config(json, "c.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("c.json: " + says), std::string::npos) << e.what();
    }
  }
}

// Every committed config passes the checks above.
TEST(HarnessConfig, EveryCommittedConfigIsAccepted) {
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/configs")) {
    if (e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(load_config(e.path().string()));
  }
}

// configs/README.md's table names every committed config with the runs it expands to: "N", or
// "N × R" for a config of R repeats (R whole rounds of N runs).
TEST(HarnessConfig, ReadmeTableCountsEveryConfigsRuns) {
  std::ifstream in(kSource + "/configs/README.md");
  ASSERT_TRUE(in) << "configs/README.md";
  std::map<std::string, std::string> runs_cell;
  const std::regex row(R"(^\| `([^`]+\.json)` \| ([^|]+) \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) runs_cell[m[1]] = m[2];
  }
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/configs")) {
    if (e.path().extension() != ".json") continue;
    const std::string name = e.path().filename().string();
    SCOPED_TRACE(name);
    ++seen;
    ASSERT_TRUE(runs_cell.count(name)) << "configs/README.md's table has no row for " << name;
    const SweepConfig c = load_config(e.path().string());
    const std::string want =
        std::to_string(expand(c, 1).size()) + (c.repeats > 1 ? " × " + std::to_string(c.repeats) : "");
    std::string cell = runs_cell[name];
    cell.erase(cell.find_last_not_of(' ') + 1);
    EXPECT_EQ(cell, want);
  }
  EXPECT_GT(seen, 0);
}

}  // namespace
}  // namespace dpscale
