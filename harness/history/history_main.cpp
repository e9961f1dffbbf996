// history_main.cpp — `dpscale history`: options, the rows of `add`, and the Python side's call.
#include "harness/history/history_main.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <utility>
#include <iostream>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "harness/common/cli_values.h"
#include "harness/common/subprocess.h"
#include "harness/common/temp_file.h"
#include "harness/history/history_rows.h"
#include "harness/history/revision.h"
#include "harness/results/results_file.h"
#include "harness/common/script_path.h"
#include "models/model_spec.h"

namespace dpscale::history {

struct HistoryArgs {
  std::string db = "results/history.sqlite", python = "/usr/bin/python3", script;
  // add, import
  std::vector<std::string> files;
  std::string rev, rev_time, import_file;
  // add of a `dpscale ab --out` directory: a.jsonl at rev_a, b.jsonl at rev_b
  std::string rev_a, rev_a_time, rev_b, rev_b_time;
  // show, changes, html
  std::string machine, model, mode, match, metric = "speedup", format = "md", out_dir, out_file;
  int world_size = 0;
  double min_effect_pct = 5.0, alpha = 0.01;
  bool include_disturbed = false, record = false;
  int permutations = 99, min_size = 3;
  // accept
  std::string accept_rev;
  CLI::App *add = nullptr, *show = nullptr, *changes = nullptr, *html = nullptr, *exp = nullptr, *imp = nullptr,
           *accept = nullptr;
};

namespace {

// The metrics a series can follow: the row's `metrics` keys that are positive numbers.
const std::vector<std::string> kMetrics = {"speedup", "efficiency", "throughput", "epoch_s"};

// A filter's text is found inside one line (a fingerprint, a point's description): empty text
// would match everything and a line break nothing, so neither is taken.
void one_line_text(const std::string& v) {
  if (v.empty()) throw ValueError("is empty");
  for (const char ch : v) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) throw ValueError("holds a control character");
  }
}

// A revision's name as git or a label would have it: one word, not an option.
void revision_name(const std::string& v) {
  one_line_text(v);
  if (v[0] == '-') throw ValueError("'" + v + "' cannot start with '-'");
  if (v.find(' ') != std::string::npos) throw ValueError("'" + v + "' holds a space");
}

// The store: `add` and `import` write it (made, with its directories, when missing); the others
// read one that is there.
void add_db(CLI::App* c, HistoryArgs& a, bool writes) {
  CLI::Option* db = c->add_option("--db", a.db, "the history store (SQLite)")->capture_default_str();
  if (writes) output_file(db);
  else input_file(db);
  program(c->add_option("--python", a.python, "Python 3 with numpy and scipy")->capture_default_str());
  input_file(c->add_option("--script", a.script, "the Python side (default <source>/harness/history/history.py)"));
}

// `accept` marks series, and takes the filters that select them but not --include-disturbed,
// which decides what a series' values are, not which series there are.
void add_filters(CLI::App* c, HistoryArgs& a, bool values = true) {
  text_of(c->add_option("--machine", a.machine, "only machines whose fingerprint contains TEXT"), "TEXT", one_line_text);
  text_of(c->add_option("--model", a.model, "only this model"), "MODEL", [](const std::string& v) { parse_model_spec(v, 0); });
  std::vector<std::string> modes;
  for (const ModeInfo& m : all_modes()) modes.push_back(m.name);
  one_of(c->add_option("--mode", a.mode, "only this mode"), modes);
  whole_in(c->add_option("--world-size", a.world_size, "only this K"), 1, 1 << 20);
  text_of(c->add_option("--match", a.match, "only points whose description contains TEXT"), "TEXT", one_line_text);
  one_of(c->add_option("--metric", a.metric, "the metric each series follows")->capture_default_str(), kMetrics);
  if (!values) return;
  c->add_flag("--include-disturbed", a.include_disturbed,
              "count runs the machine disturbed as undisturbed ones (a machine that is never quiet)");
}

void add_detection(CLI::App* c, HistoryArgs& a) {
  real_in(c->add_option("--alpha", a.alpha, "a change is kept when its permutation p is at most this")->capture_default_str(),
          {0.0, false}, {0.5});
  whole_in(c->add_option("--permutations", a.permutations, "permutations per test")->capture_default_str(), 19, 100000);
  whole_in(c->add_option("--min-size", a.min_size, "revisions each side of a change at least")->capture_default_str(), 2,
           1000);
}

std::vector<std::string> filter_args(const HistoryArgs& a) {
  std::vector<std::string> v = {"--metric", a.metric};
  if (!a.machine.empty()) v.insert(v.end(), {"--machine", a.machine});
  if (!a.model.empty()) v.insert(v.end(), {"--model", a.model});
  if (!a.mode.empty()) v.insert(v.end(), {"--mode", a.mode});
  if (a.world_size > 0) v.insert(v.end(), {"--world-size", std::to_string(a.world_size)});
  if (!a.match.empty()) v.insert(v.end(), {"--match", a.match});
  if (a.include_disturbed) v.push_back("--include-disturbed");
  return v;
}

std::vector<std::string> detection_args(const HistoryArgs& a) {
  return {"--alpha", format_number(a.alpha), "--permutations", std::to_string(a.permutations), "--min-size",
          std::to_string(a.min_size)};
}

std::string script_of(const HistoryArgs& a) {
  if (!a.script.empty()) return a.script;
  const char* env = std::getenv("DPSCALE_HISTORY_SCRIPT");
  return env && *env ? env : script_path("harness/history/history.py");
}

// Runs the Python side; its stderr (one line for bad input) passes through as it comes.
int run_python(const HistoryArgs& a, const std::vector<std::string>& args) {
  const std::string script = script_of(a);
  if (::access(script.c_str(), R_OK) != 0) throw InputError("the history's script " + script + " is not there (--script)");
  std::vector<std::string> argv = {a.python, script};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions po;
  po.echo_stderr = true;
  const ProcessResult r = run_process(argv, po);
  std::cout << r.out << std::flush;
  if (r.spawn_failed) throw InputError("cannot run " + a.python + " (--python): the history needs Python 3 with numpy and scipy");
  if (r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) return r.exit_code;
  // Never 1: `changes` means 1 as a regression, and a CI job must not read a fault as one.
  std::cerr << "dpscale history: " << script << " failed (exit " << r.exit_code << ", signal " << r.term_signal << ")\n";
  return 4;
}

// What `add` reads: each results file with the revision it measured.
std::vector<std::pair<std::string, Revision>> add_inputs(const HistoryArgs& a) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool ab = !a.files.empty() && fs::is_directory(a.files.front(), ec);
  const bool ab_revs = !a.rev_a.empty() || !a.rev_b.empty() || !a.rev_a_time.empty() || !a.rev_b_time.empty();
  if (!ab) {
    for (const std::string& f : a.files) {
      if (fs::is_directory(f, ec)) throw InputError(f + " is a directory: an A/B directory (dpscale ab --out) is added alone");
    }
    if (ab_revs) throw InputError("--rev-a and --rev-b go with a directory of dpscale ab (a.jsonl, b.jsonl), not with results files");
    if (a.rev.empty()) throw InputError("--rev is required: the revision the files measured");
    const Revision rev = resolve_revision(a.rev, a.rev_time);
    std::vector<std::pair<std::string, Revision>> out;
    for (const std::string& f : a.files) out.emplace_back(f, rev);
    return out;
  }
  const std::string dir = a.files.front();
  if (a.files.size() > 1) throw InputError(dir + " is an A/B directory (dpscale ab --out): add it alone, not with other files");
  if (!a.rev.empty() || !a.rev_time.empty()) {
    throw InputError(dir + " is an A/B directory: name its two builds' revisions with --rev-a and --rev-b, not --rev");
  }
  for (const char* name : {"a.jsonl", "b.jsonl"}) {
    if (!fs::is_regular_file(fs::path(dir) / name, ec)) {
      throw InputError(dir + " holds no " + name + ": not the --out directory of a dpscale ab session");
    }
  }
  if (a.rev_a.empty() || a.rev_b.empty()) {
    throw InputError(std::string(a.rev_a.empty() ? "--rev-a" : "--rev-b") + " is required with an A/B directory: the revision of build " +
                     (a.rev_a.empty() ? "A (a.jsonl)" : "B (b.jsonl)"));
  }
  const Revision ra = resolve_revision(a.rev_a, a.rev_a_time, "--rev-a");
  const Revision rb = resolve_revision(a.rev_b, a.rev_b_time, "--rev-b");
  return {{(fs::path(dir) / "a.jsonl").string(), ra}, {(fs::path(dir) / "b.jsonl").string(), rb}};
}

int run_add(const HistoryArgs& a) {
  const std::vector<std::pair<std::string, Revision>> inputs = add_inputs(a);
  // An A/B directory's two files go over as two row files, A's and B's, so the Python side can
  // pair the session's rounds (the anchored series) even when both builds are one revision.
  const bool ab = !a.rev_a.empty();
  // Every file is read (and refused, exit 2) before the store is touched.
  std::string rows_text, b_rows_text;
  size_t n_rows = 0;
  int n_failed = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& [path, rev] = inputs[i];
    const ResultsFile f = read_results(path);
    for (const std::string& w : f.warnings) std::cerr << "dpscale: warning: " << w << "\n";
    if (f.entries.empty()) throw InputError(path + ": no runs in the file");
    int failed = 0;
    std::string& text = ab && i == 1 ? b_rows_text : rows_text;
    for (const auto& row : rows_of(f, rev, &failed)) {
      text += row.dump() + "\n";
      ++n_rows;
    }
    n_failed += failed;
  }
  if (n_rows == 0) throw InputError("no successful runs to add (" + std::to_string(n_failed) + " failed)");
  if (n_failed) std::cerr << "dpscale history: " << n_failed << " failed run(s) left out\n";
  const TempFile rows(rows_text, ".jsonl");
  if (!ab) return run_python(a, {"add", "--db", a.db, "--rows", rows.path()});
  const TempFile b_rows(b_rows_text, ".jsonl");
  return run_python(a, {"add", "--db", a.db, "--rows", rows.path(), "--b-rows", b_rows.path()});
}

}  // namespace

HistoryCommand::HistoryCommand(CLI::App& app) : a_(std::make_unique<HistoryArgs>()) {
  HistoryArgs& a = *a_;
  cmd_ = app.add_subcommand("history", "scaling curves over revisions: a store, change points, a static page");
  cmd_->require_subcommand(1);
  a.add = cmd_->add_subcommand("add", "add a sweep's runs, measured at revision REV (the same run twice is one row), or "
                                      "an A/B session's (a dpscale ab --out directory) at --rev-a and --rev-b");
  // Read first thing by `add` (read_results), in its own words.
  kind_only(a.add->add_option("files", a.files, "results files (.jsonl), or one dpscale ab --out directory")->required(),
            "FILE");
  // Required with results files, refused with an A/B directory: checked by `add` (add_inputs).
  text_of(a.add->add_option("--rev", a.rev, "the revision measured: a commit of this repository, or a label with --rev-time"),
          "REV", revision_name);
  auto iso = [](const std::string& v) { utc_iso(v, ""); };
  text_of(a.add->add_option("--rev-time", a.rev_time, "for a REV git does not know: its time, ISO 8601"), "ISO TIME", iso);
  text_of(a.add->add_option("--rev-a", a.rev_a, "an A/B directory: the revision of build A (a.jsonl)"), "REV", revision_name);
  text_of(a.add->add_option("--rev-a-time", a.rev_a_time, "for a --rev-a git does not know: its time, ISO 8601"), "ISO TIME",
          iso);
  text_of(a.add->add_option("--rev-b", a.rev_b, "an A/B directory: the revision of build B (b.jsonl)"), "REV", revision_name);
  text_of(a.add->add_option("--rev-b-time", a.rev_b_time, "for a --rev-b git does not know: its time, ISO 8601"), "ISO TIME",
          iso);
  add_db(a.add, a, true);

  a.show = cmd_->add_subcommand("show", "each series as a table: one row per revision, in commit order");
  add_db(a.show, a, false);
  add_filters(a.show, a);
  one_of(a.show->add_option("--format", a.format, "md | json")->capture_default_str(), {"md", "json"});

  a.changes = cmd_->add_subcommand(
      "changes", "change points per series (E-divisive means); exit 1 when a series' newest change is a regression");
  add_db(a.changes, a, false);
  add_filters(a.changes, a);
  add_detection(a.changes, a);
  real_in(a.changes->add_option("--min-effect", a.min_effect_pct, "the smallest regression, in percent, that fails (exit 1)")
              ->capture_default_str(),
          {0.0, false}, {100.0});
  one_of(a.changes->add_option("--format", a.format, "md | json")->capture_default_str(), {"md", "json"});
  a.changes->add_flag("--record", a.record,
                      "mark each regression that fails this run in the store, so later runs judge its series from "
                      "that change on (CI: a change fails once)");

  a.html = cmd_->add_subcommand("html", "a static page (opens from file://): each series over revisions, its changes marked");
  output_dir(a.html->add_option("out", a.out_dir, "output directory (index.html)")->required());
  add_db(a.html, a, false);
  add_filters(a.html, a);
  add_detection(a.html, a);

  a.exp = cmd_->add_subcommand("export", "every row as JSON lines (what import reads)");
  add_db(a.exp, a, false);
  output_file(a.exp->add_option("--out", a.out_file, "write here instead of stdout"));

  a.imp = cmd_->add_subcommand("import", "add exported rows (rows already held are skipped)");
  input_file(a.imp->add_option("file", a.import_file, "rows (.jsonl, from export)")->required());
  add_db(a.imp, a, true);

  a.accept = cmd_->add_subcommand("accept", "accept the change at --rev REV: changes judges each series holding REV "
                                            "from REV on (a mark in the store)");
  // An option, as add's --rev: a revision named like an option is refused naming it.
  text_of(a.accept->add_option("--rev", a.accept_rev, "a revision the store holds: its name, or 7+ digits of its commit")
              ->required(),
          "REV", revision_name);
  add_db(a.accept, a, false);
  add_filters(a.accept, a, false);
}

HistoryCommand::~HistoryCommand() = default;

int HistoryCommand::run() const {
  const HistoryArgs& a = *a_;
  if (a.add->parsed()) return run_add(a);
  if (a.show->parsed()) {
    std::vector<std::string> v = {"show", "--db", a.db, "--format", a.format};
    for (const std::string& x : filter_args(a)) v.push_back(x);
    return run_python(a, v);
  }
  if (a.changes->parsed()) {
    std::vector<std::string> v = {"changes", "--db", a.db, "--format", a.format, "--min-effect", format_number(a.min_effect_pct)};
    for (const std::string& x : filter_args(a)) v.push_back(x);
    for (const std::string& x : detection_args(a)) v.push_back(x);
    if (a.record) v.push_back("--record");
    return run_python(a, v);
  }
  if (a.accept->parsed()) {
    std::vector<std::string> v = {"accept", "--db", a.db, "--rev", a.accept_rev};
    for (const std::string& x : filter_args(a)) v.push_back(x);
    return run_python(a, v);
  }
  if (a.html->parsed()) {
    std::vector<std::string> v = {"html", "--db", a.db, "--out", a.out_dir};
    for (const std::string& x : filter_args(a)) v.push_back(x);
    for (const std::string& x : detection_args(a)) v.push_back(x);
    return run_python(a, v);
  }
  if (a.exp->parsed()) {
    std::vector<std::string> v = {"export", "--db", a.db};
    if (!a.out_file.empty()) v.insert(v.end(), {"--out", a.out_file});
    return run_python(a, v);
  }
  if (a.imp->parsed()) return run_python(a, {"import", "--db", a.db, "--rows", a.import_file});
  return 2;
}

std::unique_ptr<HistoryCommand> add_history_command(CLI::App& app) { return std::make_unique<HistoryCommand>(app); }

}  // namespace dpscale::history
