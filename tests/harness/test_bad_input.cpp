// test_bad_input.cpp — every option of every `dpscale` subcommand and of every trainer, each
// given a value it must refuse: exit 2, one line on stderr naming the option, and nothing made or
// changed (a listing of the run's own directory, with a hash of every file, before and after).
//
// The options come from the programs' own tables, not from a list here: dpscale's CLI11 app
// (harness/cli.h), each option's kind read from its type name (harness/common/cli_values.h:
// "INT in [1, 1000]", "FILE", "OUT FILE", ...), and the trainers' option table
// (contract/trainer_options.h), each kind with its bad value. An option added tomorrow is tried
// tomorrow; one whose kind this test cannot give a bad value fails it. Controls: each base
// command line, with no bad value, is accepted (a refusal is the bad value's doing).
//
// Fast: runs go four at a time, each in a directory of its own, and a trainer refuses before any
// MPI work, so the data-parallel ones run without mpirun.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "contract/modes.h"
#include "contract/trainer_options.h"
#include "core/fnv1a.h"
#include "harness/cli.h"
#include "harness_util.h"

namespace dpscale {
namespace {

namespace fs = std::filesystem;

// One command line to try, in a directory of its own made from the fixture.
struct Case {
  std::string what;                // "sweep --repeats=1001", for messages
  std::vector<std::string> argv;   // with "{dir}" for the run's directory
  std::string names;               // the option's name, which the one line must carry ("" = none)
  int exit_code = 2;
  bool one_line = true;
  int also_fine = -1;  // a second exit status the case may end with (ab's control: 3, undecided)
};

// Three rounds of a single and a naive K = 2 run of the small model.
std::string results_lines() {
  std::string lines;
  for (int r = 0; r < 3; ++r) {
    for (const SweepRun& p : {test::pt("small", "single", 1, std::nullopt, "none", r),
                                test::pt("small", "naive", 2, std::nullopt, "none", r)}) {
      lines += test::sweep_line(p, test::make_record(p, p.point.mode == Mode::single ? 1.0 : 0.6, p.point.mode == Mode::single ? std::nullopt : std::optional<double>(0.1)));
    }
  }
  return lines;
}

// A history store holding those runs at one revision, and its export, made once by the real
// `dpscale history add` and `export` (every case's directory gets a copy of the bytes).
struct HistoryFixture {
  std::string store, rows;
};
const HistoryFixture& history_fixture() {
  static const HistoryFixture h = [] {
    test::ScratchDir d;
    test::write_file(d.file("results.jsonl"), results_lines());
    ProcessOptions o;
    o.timeout_s = 60;
    o.cwd = d.path.string();
    const ProcessResult add = run_process({test::kDpscale, "history", "add", d.file("results.jsonl"), "--rev", "r1",
                                           "--rev-time", "2026-01-01T00:00:00Z", "--db", d.file("h.sqlite")}, o);
    const ProcessResult exp = run_process({test::kDpscale, "history", "export", "--db", d.file("h.sqlite"), "--out",
                                           d.file("rows.jsonl")}, o);
    if (add.exit_code != 0 || exp.exit_code != 0) {
      ADD_FAILURE() << "the history fixture: add exit " << add.exit_code << ", export exit " << exp.exit_code << ": "
                    << add.err << exp.err;
      return HistoryFixture{};
    }
    return HistoryFixture{test::read_file(d.file("h.sqlite")), test::read_file(d.file("rows.jsonl"))};
  }();
  return h;
}

// The files a command line may name: a config, results files, a plotter that does nothing, a
// history store and its export, and `blocker`, a file that stands where a directory would have
// to be.
void make_fixture(const std::string& dir) {
  test::write_file(dir + "/c.json", R"({"name": "c", "models": ["16,8,4"], "modes": ["single"],
                                         "options": {"samples": 256, "batch_size": 64, "epochs": 1}})");
  const std::string lines = results_lines();
  test::write_file(dir + "/results.jsonl", lines);
  test::write_file(dir + "/base.jsonl", lines);
  test::write_file(dir + "/fake.py", "import sys\nsys.exit(0)\n");
  test::write_file(dir + "/blocker", "a file where a directory would have to be\n");
  // A second build for dpscale ab: the built trainers, each started by a script of its own.
  fs::create_directories(dir + "/bin-b");
  for (const ModeInfo& m : all_modes()) {
    test::write_file(dir + "/bin-b/" + m.executable,
                     "#!/bin/sh\nexec " + std::string(DPSCALE_BIN_DIR) + "/" + m.executable + " \"$@\"\n", true);
  }
  test::write_file(dir + "/history.sqlite", history_fixture().store);
  test::write_file(dir + "/rows.jsonl", history_fixture().rows);
}

// Every entry under `dir`: its path, and for a file its size and hash.
std::map<std::string, std::string> listing(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_directory()) {
      out[rel] = "dir";
    } else {
      const std::string text = test::read_file(e.path().string());
      out[rel] = std::to_string(text.size()) + ":" + std::to_string(fnv1a64(text.data(), text.size()));
    }
  }
  return out;
}

std::string replace_dir(std::string s, const std::string& dir) {
  for (size_t at; (at = s.find("{dir}")) != std::string::npos;) s.replace(at, 5, dir);
  return s;
}

// `name` as a word of `line`: "--link" is not named by "--link-dilation".
bool names(const std::string& line, const std::string& name) {
  for (size_t at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
    const size_t end = at + name.size();
    const char next = end < line.size() ? line[end] : ' ';
    if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '-' || next == '_')) return true;
  }
  return false;
}

// Runs every case, four at a time, and checks each.
void run_cases(const std::vector<Case>& cases) {
  test::ScratchDir root;
  std::atomic<size_t> next{0};
  std::mutex report;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i; (i = next++) < cases.size();) {
      const Case& c = cases[i];
      const std::string dir = root.file("case" + std::to_string(i));
      fs::create_directories(dir);
      make_fixture(dir);
      const auto before = listing(dir);
      std::vector<std::string> argv;
      for (const std::string& a : c.argv) argv.push_back(replace_dir(a, dir));
      ProcessOptions o;
      o.timeout_s = 60;
      o.cwd = dir;
      const ProcessResult r = run_process(argv, o);
      const std::vector<std::string> lines = test::lines_of(r.err);
      std::string wrong;
      if (r.exit_code != c.exit_code && r.exit_code != c.also_fine) wrong += "exit " + std::to_string(r.exit_code) + "; ";
      if (c.one_line && lines.size() != 1) wrong += std::to_string(lines.size()) + " lines on stderr; ";
      const std::string name = replace_dir(c.names, dir);
      if (!name.empty() && (lines.empty() || !names(lines.front(), name))) wrong += "does not name " + name + "; ";
      if (c.exit_code == 2 && listing(dir) != before) wrong += "files made or changed; ";
      if (!wrong.empty()) {
        const std::lock_guard<std::mutex> lock(report);
        failures.push_back(c.what + ": " + wrong + "stderr: " + r.err.substr(0, 400));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

// ---- dpscale ----

// A git repository of three commits, made once, for dpscale bisect's base: its path and commits.
struct BisectRepo {
  test::ScratchDir dir;
  std::vector<std::string> ids = test::make_git_repo(dir.file("repo"), 3);
  std::string path() const { return dir.file("repo"); }
};
const BisectRepo& bisect_repo() {
  static const BisectRepo r;
  return r;
}

// A command line every subcommand accepts (the controls run it as it is): positionals in order,
// then options.
struct Base {
  std::vector<std::string> positionals;
  std::vector<std::pair<std::string, std::string>> options;  // value "" for a flag
};

const std::map<std::string, Base>& bases() {
  static const std::map<std::string, Base> b = {
      // A real sweep of one tiny run, were nothing refused (a dry run would not look at --bin-dir).
      {"sweep", {{"{dir}/c.json"}, {{"--out", "{dir}/out.jsonl"}, {"--probe-seconds", "0"}, {"--disturbed-reruns", "0"}}}},
      {"report", {{"{dir}/results.jsonl"}, {}}},
      {"compare", {{"{dir}/results.jsonl", "{dir}/base.jsonl"}, {{"--tolerance", "0.5"}}}},
      // A real session of three rounds of c.json's one single run: judged at 50%, it is the same
      // (or, on a machine too busy to tell, undecided: the control also takes exit 3).
      {"ab", {{"{dir}/c.json"}, {{"--a", DPSCALE_BIN_DIR}, {"--b", "{dir}/bin-b"}, {"--out", "{dir}/ab"}, {"--rounds", "3"},
                                  {"--max-rounds", "3"}, {"--min-effect", "50"}, {"--probe-seconds", "0"},
                                  {"--disturbed-reruns", "0"}}}},
      // A dry run: every check, the revisions listed, nothing built.
      {"bisect", {{bisect_repo().ids[0], bisect_repo().ids[2], "{dir}/c.json"},
                  {{"--repo", bisect_repo().path()}, {"--work", "{dir}/bw"}, {"--dry-run", ""}}}},
      {"plot", {{"{dir}/results.jsonl"}, {{"--out", "{dir}/charts"}, {"--script", "{dir}/fake.py"}}}},
      {"schema", {{}, {}}},
      {"predict", {{}, {{"--single", "small=0.03"}, {"--link", "pcie4"}, {"--world-sizes", "2"}}}},
      // The history's subcommands: a store of the fixture's runs at one revision (a label: the
      // case's directory is no git repository).
      {"history add",
       {{"{dir}/results.jsonl"}, {{"--rev", "r2"}, {"--rev-time", "2026-01-02T00:00:00Z"}, {"--db", "{dir}/history.sqlite"}}}},
      {"history show", {{}, {{"--db", "{dir}/history.sqlite"}}}},
      {"history changes", {{}, {{"--db", "{dir}/history.sqlite"}}}},
      {"history html", {{"{dir}/page"}, {{"--db", "{dir}/history.sqlite"}}}},
      {"history export", {{}, {{"--db", "{dir}/history.sqlite"}, {"--out", "{dir}/export.jsonl"}}}},
      {"history import", {{"{dir}/rows.jsonl"}, {{"--db", "{dir}/history.sqlite"}}}},
      {"history accept", {{}, {{"--rev", "r1"}, {"--db", "{dir}/history.sqlite"}, {"--metric", "throughput"}}}},
  };
  return b;
}

// A value of this kind (the option's type name) that the option must refuse; "" when the kind
// is one this test does not know.
std::string bad_value(const std::string& kind) {
  if (kind.rfind("INT in [", 0) == 0) return std::to_string(std::stoll(kind.substr(kind.find(", ") + 2)) + 1);
  if (kind.rfind("NUMBER", 0) == 0) return "nan";
  if (kind.rfind("{", 0) == 0) return "nonsense";
  if (kind == "FILE") return "{dir}/no-such-file";
  if (kind == "DIR") return "{dir}/no-such-dir";
  if (kind == "OUT FILE" || kind == "OUT DIR") return "{dir}/blocker/x";
  if (kind == "PROGRAM") return "{dir}/no-such-program";
  // Launcher arguments that set what the sweep sets itself: the first flag the kind names.
  if (kind.rfind("ARGS but not ", 0) == 0) return kind.substr(13, kind.find(',') - 13) + " 4";
  // The forms of their own: LINK, MODEL, ISO TIME, MODEL=SECONDS,..., K,..., F|auto:TFLOPS, ...
  if (kind == "LINK" || kind == "MODEL" || kind == "ISO TIME" || kind.find(',') != std::string::npos ||
      kind.find('|') != std::string::npos) {
    return "x";
  }
  if (kind == "REV") return "-x";     // a revision is no option
  if (kind == "COMMIT") return "no-such-commit";  // bisect's GOOD and BAD: git must know them
  if (kind == "TEXT") return "a\tb";  // one line of text, no control characters
  return "";
}

// `sub` is a subcommand's path: "report", "history add".
std::vector<std::string> render(const std::string& sub, const Base& base) {
  std::vector<std::string> a = {test::kDpscale};
  std::istringstream words(sub);
  for (std::string w; words >> w;) a.push_back(w);
  a.insert(a.end(), base.positionals.begin(), base.positionals.end());
  for (const auto& [flag, value] : base.options) {
    a.push_back(flag);
    if (!value.empty()) a.push_back(value);
  }
  return a;
}

// Every subcommand that runs, with its path: a subcommand of subcommands (history) is walked into.
void leaves(CLI::App* app, const std::string& path, std::vector<std::pair<std::string, CLI::App*>>& out) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    const std::string name = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    if (sub->get_subcommands([](CLI::App*) { return true; }).empty()) {
      out.emplace_back(name, sub);
    } else {
      leaves(sub, name, out);
    }
  }
}

TEST(BadInput, EveryDpscaleOptionRefusesABadValue) {
  DpscaleCli cli;
  std::vector<Case> cases;
  int options = 0;
  std::vector<std::pair<std::string, CLI::App*>> subs;
  leaves(&cli.app, "", subs);
  for (const auto& [name, sub] : subs) {
    ASSERT_TRUE(bases().count(name)) << "no base command line for dpscale " << name;
    const Base& base = bases().at(name);
    // Control: the base is accepted.
    cases.push_back({"dpscale " + name + " (control)", render(name, base), "", 0, false, name == "ab" ? 3 : -1});
    size_t positional = 0;
    for (const CLI::Option* opt : sub->get_options()) {
      const std::string flag = opt->get_name();
      if (flag == "--help") continue;
      ++options;
      const bool is_flag = opt->get_expected_max() == 0;  // a flag takes no value but true or false
      const std::string v = is_flag ? "maybe" : bad_value(opt->get_type_name());
      if (v.empty()) {
        ADD_FAILURE() << "dpscale " << name << " " << flag << ": kind '" << opt->get_type_name()
                      << "' has no bad value here (give the option a kind: harness/common/cli_values.h)";
        continue;
      }
      Base b = base;
      if (!opt->nonpositional()) {
        // A positional is named by its value: the path the subcommand could not use.
        if (positional < b.positionals.size()) b.positionals[positional] = v;
        else b.positionals.push_back(v);
        ++positional;
        cases.push_back({"dpscale " + name + " " + flag + "='" + v + "'", render(name, b), v, 2, true});
        continue;
      }
      b.options.erase(std::remove_if(b.options.begin(), b.options.end(), [&](const auto& o) { return o.first == flag; }),
                      b.options.end());
      std::vector<std::string> argv = render(name, b);
      argv.push_back(flag + "=" + v);
      cases.push_back({"dpscale " + name + " " + flag + "='" + v + "'", argv, flag, 2, true});
    }
  }
  EXPECT_GT(options, 70) << "the walk found too few options: is the app built?";
  run_cases(cases);
}

// ---- the trainers ----

// A tiny run: with a good value of every option it trains in a fraction of a second (K = 1).
const std::vector<std::pair<std::string, std::string>> kTrainerBase = {
    {"--backend", "cpu"}, {"--model", "16,8,4"}, {"--samples", "256"}, {"--batch-size", "64"}, {"--epochs", "1"}, {"--quiet", ""}};

// A value of the option's kind that it must refuse: below every whole option's range, not a
// finite number, not a choice, not true or false, and for text (a model, a link, a file to read
// or write, A:B ...) a path under a file, which no form accepts and no file can be made at.
std::string trainer_bad_value(const TrainerOption& t) {
  switch (t.kind) {
    case ValueKind::whole: return "-1";
    case ValueKind::real: return "nan";
    case ValueKind::choice: return "nonsense";
    case ValueKind::switch_: return "maybe";
    case ValueKind::text: return "{dir}/blocker/x";
  }
  return "";
}

TEST(BadInput, EveryTrainerOptionRefusesABadValue) {
  std::vector<Case> cases;
  for (const ModeInfo& m : all_modes()) {
    const std::string exe = std::string(DPSCALE_BIN_DIR) + "/" + m.executable;
    auto argv_without = [&](const std::string& flag) {
      std::vector<std::string> a = {exe};
      for (const auto& [f, v] : kTrainerBase) {
        if (f == flag) continue;
        a.push_back(f);
        if (!v.empty()) a.push_back(v);
      }
      return a;
    };
    // Controls: the base trains (K = 1); a data-parallel trainer without mpirun says it needs
    // mpirun, naming no option.
    cases.push_back({std::string(m.executable) + " (control)", argv_without(""), "", m.data_parallel ? 2 : 0, false});
    for (const TrainerOption& t : trainer_options()) {
      if (!t.accepted_by(m.mode)) continue;
      const std::string v = trainer_bad_value(t);
      std::vector<std::string> argv = argv_without(t.flag);
      argv.push_back(t.flag + "=" + v);
      cases.push_back({std::string(m.executable) + " " + t.flag + "='" + v + "'", argv, t.flag, 2, true});
    }
  }
  run_cases(cases);
}

}  // namespace
}  // namespace dpscale
