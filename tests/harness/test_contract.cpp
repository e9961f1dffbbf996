// test_contract.cpp — the contract is written once and everything agrees with it: the docs' copies
// of the record's fields (docs/record.md), the trainer options (docs/trainers.md) and the link presets
// (docs/link-emulation.md) are the generated ones, a config the trainers would refuse is refused by
// `dpscale sweep --dry-run` in the trainers' own words, every option the table gives a mode is in
// that trainer's --help, and a record survives writing and reading through the field table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "contract/link_model.h"
#include "contract/modes.h"
#include "contract/schema_doc.h"
#include "contract/trainer_options.h"
#include "harness_util.h"

namespace dpscale {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text between `<!-- NAME: generated ... -->` (after that line) and `<!-- NAME: end -->` in
// a file of the source tree; the test fails naming the file when a marker is missing.
std::string generated_copy(const std::string& file, const std::string& name) {
  const std::string text = read_text(test::kSource + "/" + file);
  const std::string begin = "<!-- " + name + ": generated";
  const std::string end = "<!-- " + name + ": end -->";
  const size_t a = text.find(begin), b = text.find(end);
  if (a == std::string::npos || b == std::string::npos || b < a) {
    ADD_FAILURE() << file << " lacks the " << name << " markers";
    return "";
  }
  const size_t table = text.find('\n', a) + 1;
  return text.substr(table, b - table);
}

TEST(Contract, RecordTableIsTheGeneratedOne) {
  EXPECT_EQ(generated_copy("docs/record.md", "record-fields"), record_fields_markdown())
      << "docs/record.md's record table differs from the field table: paste `dpscale schema --format md` between the markers";
}

TEST(Contract, TrainersOptionsTableIsTheGeneratedOne) {
  EXPECT_EQ(generated_copy("docs/trainers.md", "trainer-options"), trainer_options_markdown())
      << "docs/trainers.md's options table differs from the option table: paste `dpscale schema --table options` between the markers";
}

TEST(Contract, PointTableIsTheGeneratedOne) {
  EXPECT_EQ(generated_copy("docs/RESULTS_FORMAT.md", "point-fields"), point_fields_markdown())
      << "docs/RESULTS_FORMAT.md's point table differs from the point's fields: paste `dpscale schema --table point` between the markers";
}

TEST(Contract, LinkPresetTableIsTheGeneratedOne) {
  EXPECT_EQ(generated_copy("docs/link-emulation.md", "link-presets"), link_presets_markdown())
      << "docs/link-emulation.md's preset table differs from the presets: paste `dpscale schema --table links` between the markers";
}

// The help texts name the presets from the same table: a preset added there shows in --help.
TEST(Contract, LinkHelpNamesEveryPreset) {
  const TrainerOption& link = option("link");
  for (const LinkPreset& p : link_presets()) {
    EXPECT_NE(link.help.find(p.name), std::string::npos) << p.name;
    EXPECT_NE(link_presets_markdown().find("| `" + p.name + "` |"), std::string::npos) << p.name;
  }
  EXPECT_NE(link.help.find("none | " + link_preset_names(" | ") + " | ALPHA_US:GBPS"), std::string::npos) << link.help;
}

// Negative control for the options table: every option appears once, with its flag and help.
TEST(Contract, GeneratedOptionsTableNamesEveryOptionOnce) {
  const std::string md = trainer_options_markdown();
  for (const TrainerOption& t : trainer_options()) {
    const std::string row = "| `" + t.flag + "` | ";
    const size_t at = md.find(row);
    ASSERT_NE(at, std::string::npos) << t.flag;
    EXPECT_EQ(md.find(row, at + 1), std::string::npos) << "listed twice: " << t.flag;
  }
  // One header, one rule, one row per option.
  EXPECT_EQ(static_cast<size_t>(std::count(md.begin(), md.end(), '\n')), trainer_options().size() + 2);
}

// Negative control: the comparison above sees a changed meaning.
TEST(Contract, GeneratedTableNamesEveryFieldOnce) {
  const std::string md = record_fields_markdown();
  std::set<std::string> seen;
  for (const RecordField& f : record_fields()) {
    EXPECT_TRUE(seen.insert(f.name).second) << "field listed twice: " << f.name;
    EXPECT_NE(md.find("| `" + f.name + "` | "), std::string::npos) << f.name;
  }
  EXPECT_EQ(seen.size(), to_json(RunRecord{}).size()) << "to_json writes exactly the table's fields";
}

TEST(Contract, RecordRoundTripsThroughTheFieldTable) {
  RunRecord r;
  r.mode = "bucketed";
  r.widths = {784, 64, 10};
  r.n_params = 50890;
  r.world_size = 2;
  r.epoch_times_s = {1.5, 1.25};
  r.exposed_comm_s = 0.125;
  r.n_buckets = 3;
  r.bucket_bytes = {4, 8, 12};
  r.seed = 18446744073709551615ULL;
  const RunRecord back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.seed, r.seed);
  EXPECT_FALSE(back.comm_s.has_value());
  ASSERT_TRUE(back.exposed_comm_s.has_value());
  EXPECT_EQ(*back.exposed_comm_s, 0.125);

  nlohmann::json missing = to_json(r);
  missing.erase("n_params");
  EXPECT_THROW(record_from_json(missing), std::runtime_error);
  nlohmann::json mistyped = to_json(r);
  mistyped["world_size"] = "two";
  EXPECT_THROW(record_from_json(mistyped), std::runtime_error);
  // Integers only, and in range: a float or an out-of-range integer in an int field would be cast
  // by the JSON library (undefined behaviour for 8.9e61 as an int, found by fuzz_results_line).
  for (const nlohmann::json& bad : {nlohmann::json(2.5), nlohmann::json(8.9e61), nlohmann::json(int64_t{1} << 40)}) {
    nlohmann::json j = to_json(r);
    j["world_size"] = bad;
    EXPECT_THROW(record_from_json(j), std::runtime_error) << bad;
    j = to_json(r);
    j["widths"] = {784, bad, 10};
    EXPECT_THROW(record_from_json(j), std::runtime_error) << bad;
  }
  nlohmann::json negative_seed = to_json(r);
  negative_seed["seed"] = -1;
  EXPECT_THROW(record_from_json(negative_seed), std::runtime_error);
  // A diverged run's NaN loss is written as null and reads back as NaN.
  RunRecord diverged = r;
  diverged.loss_global = {2.5, std::nan("")};
  const RunRecord d = record_from_json(nlohmann::json::parse(to_json(diverged).dump()));
  ASSERT_EQ(d.loss_global.size(), 2u);
  EXPECT_EQ(d.loss_global[0], 2.5);
  EXPECT_TRUE(std::isnan(d.loss_global[1]));

  nlohmann::json optional_absent = to_json(r);
  optional_absent.erase("comm_s");  // optional: absent reads as null
  EXPECT_NO_THROW(record_from_json(optional_absent));
}

// The contention fields survive writing and reading, values and nulls; a record written before
// they existed reads as "not measured" (empty lists, nulls), not as zero contention.
TEST(Contract, ContentionFieldsRoundTripAndOlderRecordsReadAsUnmeasured) {
  RunRecord r;
  r.mode = "bucketed";
  r.epoch_times_s = {1.5, 1.25};
  r.per_rank_run_delay_s = {0.125, 0.5};
  r.per_rank_involuntary_switches = {12.5, 480.0};
  r.per_rank_step_run_delay_s = {0.0025, 0.0175};
  r.epoch_run_delay_share = {0.25, 0.375};
  r.run_delay_share = 0.3125;
  r.contended_rank = 1;
  r.contended_cause = "compute";
  const RunRecord back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.per_rank_run_delay_s, r.per_rank_run_delay_s);
  EXPECT_EQ(back.per_rank_involuntary_switches, r.per_rank_involuntary_switches);
  EXPECT_EQ(back.per_rank_step_run_delay_s, r.per_rank_step_run_delay_s);
  EXPECT_EQ(back.epoch_run_delay_share, r.epoch_run_delay_share);
  ASSERT_TRUE(back.run_delay_share);
  EXPECT_EQ(*back.run_delay_share, 0.3125);
  ASSERT_TRUE(back.contended_rank);
  EXPECT_EQ(*back.contended_rank, 1);
  EXPECT_EQ(back.contended_cause, "compute");

  nlohmann::json older = to_json(r);
  for (const char* f : {"per_rank_run_delay_s", "per_rank_involuntary_switches", "per_rank_step_run_delay_s",
                        "epoch_run_delay_share", "run_delay_share", "contended_rank", "contended_cause"}) {
    older.erase(f);
  }
  const RunRecord old = record_from_json(older);
  EXPECT_TRUE(old.per_rank_run_delay_s.empty());
  EXPECT_FALSE(old.run_delay_share.has_value());
  EXPECT_FALSE(old.contended_rank.has_value());
  // Mistyped is refused, naming the field.
  nlohmann::json bad = to_json(r);
  bad["run_delay_share"] = "high";
  try {
    record_from_json(bad);
    ADD_FAILURE() << "a string run_delay_share was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("run_delay_share"), std::string::npos) << e.what();
  }
}

// The issue's two drifted cases, and more: the config is refused at sweep time, exit 2, one line,
// and the complaint is word for word what the trainer's own parser says about the flag.
TEST(Contract, SweepRefusesWhatTheTrainersRefuseInTheirWords) {
  struct Case {
    std::string config_key, json_value, flag, flag_value;
  };
  const std::vector<Case> cases = {
      {"link", "\"10:0\"", "--link", "10:0"},
      {"link_dilation", "\"1e7\"", "--link-dilation", "1e7"},
      {"link", "\"1e12:5\"", "--link", "1e12:5"},
      {"link_dilation", "\"auto:0\"", "--link-dilation", "auto:0"},
  };
  test::ScratchDir dir;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.config_key + " = " + c.json_value);
    // The trainer's own words, from the parser the trainers run.
    std::vector<std::string> args = {"train_dp_naive", c.flag, c.flag_value};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    TrainOptions o;
    std::string trainer_says;
    try {
      parse_options(static_cast<int>(argv.size()), argv.data(), Mode::naive, o);
    } catch (const OptionError& e) {
      trainer_says = e.complaint();
    }
    ASSERT_FALSE(trainer_says.empty()) << "the trainer accepted " << c.flag << " " << c.flag_value;

    const std::string cfg = dir.file("drift.json");
    test::write_file(cfg, R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2], ")" + c.config_key +
                              "\": " + c.json_value + "}");
    const ProcessResult r = test::dpscale({"sweep", cfg, "--dry-run"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("'" + c.config_key + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(trainer_says), std::string::npos) << "config says: " << r.err << "trainer says: " << trainer_says;
    EXPECT_TRUE(r.out.empty()) << "nothing may be listed to run: " << r.out;
  }
}

// Negative control of the test above: a value both accept is listed, not refused.
TEST(Contract, SweepAcceptsWhatTheTrainersAccept) {
  test::ScratchDir dir;
  const std::string cfg = dir.file("ok.json");
  test::write_file(cfg, R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2], "link": "10:0.5", "link_dilation": 1e3})");
  const ProcessResult r = test::dpscale({"sweep", cfg, "--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--link 10:0.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--link-dilation 1000"), std::string::npos) << r.out;
}

// Each trainer's --help lists exactly the options the table gives its mode.
TEST(Contract, EveryTrainerHelpListsItsOptionsFromTheTable) {
  for (const ModeInfo& m : all_modes()) {
    SCOPED_TRACE(m.name);
    const ProcessResult r = run_process({std::string(DPSCALE_BIN_DIR) + "/" + m.executable, "--help"}, {});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const TrainerOption& t : trainer_options()) {
      const bool listed = r.out.find(t.flag + " ") != std::string::npos || r.out.find(t.flag + "\n") != std::string::npos;
      EXPECT_EQ(listed, t.accepted_by(m.mode)) << t.flag;
    }
    EXPECT_NE(r.out.find(m.description), std::string::npos);
  }
}

TEST(Contract, SchemaJsonCarriesTheTables) {
  const ProcessResult r = test::dpscale({"schema", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["modes"].size(), all_modes().size());
  EXPECT_EQ(j["modes"][3]["name"], "bucketed");
  EXPECT_EQ(j["modes"][1]["wait_field"], "comm_s");
  EXPECT_EQ(j["modes"][2]["wait_field"], "exposed_comm_s");
  EXPECT_EQ(j["record_fields"].size(), record_fields().size());
  EXPECT_EQ(j["options"].size(), trainer_options().size());
}

}  // namespace
}  // namespace dpscale
