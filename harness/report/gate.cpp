// gate.cpp — reading the files of a comparison, pairing rounds into speedup samples, and
// handing them to harness/report/gate.py.
#include "harness/report/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "harness/report/analysis.h"
#include "harness/report/compare.h"
#include "harness/common/script_path.h"
#include "harness/common/subprocess.h"
#include "harness/common/temp_file.h"
#include "core/errors.h"

namespace dpscale {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

ResultsFile read_nonempty(const std::string& path) {
  ResultsFile f = read_results(path);
  refuse_no_runs(f);
  refuse_gpu_shared(f, "dpscale compare");
  return f;
}

// One side of a point: its paired speedups, and the rounds left out with the reason.
struct Side {
  std::vector<double> samples;
  std::vector<std::string> disturbed;
  std::vector<std::string> unpaired;
  std::vector<std::string> alike;  // rounds whose run and single run were both disturbed, alike: kept
  int ok_runs = 0, failed_runs = 0;
};

json side_json(const Side& s) {
  json j;
  j["samples"] = s.samples;
  j["disturbed"] = s.disturbed;
  j["unpaired"] = s.unpaired;
  j["alike"] = s.alike;
  j["ok_runs"] = s.ok_runs;
  j["failed_runs"] = s.failed_runs;
  return j;
}

// Adds the paired speedups of file `f` to `sides` (keyed by point), judging disturbance
// against `idle` (the best probe of every file compared).
void collect(const ResultsFile& f, double idle, const DisturbanceLimits& lim, std::map<Point, Side>& sides,
             std::vector<std::string>& notes) {
  int stateless = 0;
  for (const SweepEntry& e : f.entries) {
    if (!e.state) ++stateless;
    if (!e.ok && e.point.mode->data_parallel) ++sides[e.point].failed_runs;
  }
  if (stateless) {
    notes.push_back(f.path + ": " + std::to_string(stateless) +
                    " run(s) carry no machine state (an older sweep): their disturbance is not checked");
  }
  for (const PairedRun& r : pair_runs(f, idle, lim)) {
    Side& s = sides[r.entry->point];
    ++s.ok_runs;
    if (!r.disturbed.empty()) {
      s.disturbed.push_back(r.disturbed);
    } else if (!r.unpaired.empty()) {
      s.unpaired.push_back(r.unpaired);
    } else if (r.speedup) {
      s.samples.push_back(*r.speedup);
      if (!r.alike.empty()) s.alike.push_back(r.alike);
    }
  }
}

void add_states(const ResultsFile& f, std::vector<const MachineState*>& out) {
  for (const SweepEntry& e : f.entries) {
    if (e.state) out.push_back(&*e.state);
  }
}

}  // namespace

std::string gate_script(const GateOptions& o) {
  if (!o.script.empty()) return o.script;
  const char* env = std::getenv("DPSCALE_GATE_SCRIPT");
  return env && *env ? env : script_path("harness/report/gate.py");
}

void check_gate_script(const GateOptions& o) {
  const std::string script = gate_script(o);
  if (!fs::exists(script)) throw InputError("the gate's script " + script + " is not there (--gate-script)");
}

GateFiles load_gate_files(const std::string& now_path, const std::string& base_path, const std::string& base_dir) {
  GateFiles g;
  g.now_path = now_path;
  g.now = read_nonempty(now_path);
  if (!base_path.empty()) {
    ResultsFile b = read_nonempty(base_path);
    if (const std::string other = other_machine(b, g.now); !other.empty()) {
      throw InputError("baseline " + other +
                       ": the gate compares a machine with itself (--tolerance compares across machines, crudely)");
    }
    g.bases.push_back(std::move(b));
  }
  if (!base_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(base_dir, ec)) throw InputError("--baseline " + base_dir + ": not a directory");
    std::vector<std::string> paths;
    for (const auto& d : fs::directory_iterator(base_dir, ec)) {
      if (d.is_regular_file() && d.path().extension() == ".jsonl") paths.push_back(d.path().string());
    }
    std::sort(paths.begin(), paths.end());
    for (const std::string& p : paths) {
      if (fs::equivalent(p, now_path, ec)) continue;  // NEW kept among the accepted runs
      ResultsFile b = read_nonempty(p);
      if (const std::string other = other_machine(b, g.now); !other.empty()) {
        g.notes.push_back("left out: " + other);
        continue;
      }
      g.bases.push_back(std::move(b));
    }
    if (g.bases.empty()) {
      throw InputError("--baseline " + base_dir + ": no baseline from this machine (" + machine_of(g.now).describe() + ")" +
                       (g.notes.empty() ? std::string(": no .jsonl file there") : ": " + g.notes.front()));
    }
  }
  if (g.bases.empty()) throw InputError("no baseline: give BASELINE.jsonl or --baseline DIR");
  return g;
}

json gate_document(const GateFiles& f, const GateOptions& o, bool* has_samples) {
  std::vector<const MachineState*> states;
  add_states(f.now, states);
  for (const ResultsFile& b : f.bases) add_states(b, states);
  const double idle = usual_probe(states);
  json doc;
  doc["now"] = f.now_path;
  doc["base"] = json::array();
  for (const ResultsFile& b : f.bases) doc["base"].push_back(b.path);
  doc["alpha"] = o.alpha;
  doc["min_effect"] = o.min_effect;
  doc["min_samples"] = kGateMinSamples;
  doc["format"] = o.format;
  doc["usual_probe_gflops"] = idle;
  std::vector<std::string> notes = f.notes;
  std::map<Point, Side> now, base;
  collect(f.now, idle, o.limits, now, notes);
  for (const ResultsFile& b : f.bases) collect(b, idle, o.limits, base, notes);
  doc["notes"] = notes;

  bool any = false;
  json points = json::array();
  auto point = [&](const Point& k, const std::string& status, const Side* n, const Side* b, const std::string& why) {
    json p;
    p["key"] = k.to_json();
    p["describe"] = k.describe();
    p["curve"] = k.curve();
    p["status"] = status;
    if (n) p["now"] = side_json(*n);
    if (b) p["base"] = side_json(*b);
    if (!why.empty()) p["why"] = why;
    points.push_back(p);
  };
  for (const auto& [k, b] : base) {
    if (b.ok_runs == 0) continue;  // failed in the baseline too: nothing to hold
    const auto n = now.find(k);
    if (n == now.end() || (n->second.ok_runs == 0 && n->second.failed_runs == 0)) {
      point(k, "missing", nullptr, &b, "not in the new file");
    } else if (n->second.ok_runs == 0) {
      point(k, "failed", &n->second, &b, "every run failed in the new file");
    } else {
      point(k, "compared", &n->second, &b, "");
      // Rounds the machine disturbed still count here: a busy machine makes a point undecided,
      // never sends a file to the crude mode (which would judge the disturbed runs).
      auto rounds = [](const Side& x) { return static_cast<int>(x.samples.size() + x.disturbed.size()); };
      any = any || (rounds(n->second) >= kGateMinSamples && rounds(b) >= kGateMinSamples);
    }
  }
  for (const auto& [k, n] : now) {
    if (base.count(k) && base.at(k).ok_runs > 0) continue;
    if (n.ok_runs) point(k, "extra", &n, nullptr, "not in the baseline");
  }
  doc["points"] = points;
  if (has_samples) *has_samples = any;
  return doc;
}

GateResult run_gate(const GateFiles& f, const GateOptions& o) {
  bool has_samples = false;
  json doc = gate_document(f, o, &has_samples);
  GateResult result;
  if (!has_samples) {
    // Files from older or single-repeat sweeps: no distribution to test. The crude mode of
    // compare.h judges their medians against a fixed tolerance, and says it did.
    const Analysis now = analyse(f.now), base = analyse(f.bases.front());
    CompareOptions co;
    co.tolerance = o.crude_tolerance;
    const Comparison c = compare(now, base, co);
    result.text = "# no point has " + std::to_string(kGateMinSamples) +
                  " paired rounds on both sides (an older or single-repeat file): compared in the crude mode (--tolerance " +
                  format_number(o.crude_tolerance) + ")\n" + render_comparison(c, co, f.now_path, f.bases.front().path);
    result.exit_code = c.failed() ? 1 : 0;
    return result;
  }
  return judge_document(std::move(doc), o);
}

GateResult judge_document(json doc, const GateOptions& o) {
  GateResult result;
  check_gate_script(o);
  const std::string script = gate_script(o);
  const TempFile verdicts("", ".json");
  doc["verdicts_out"] = verdicts.path();
  const TempFile input(doc.dump(), ".json");
  ProcessOptions po;
  po.timeout_s = 300;
  const ProcessResult r = run_process({o.python, script, input.path()}, po);
  if (r.spawn_failed) throw InputError("cannot run " + o.python + " (--python): the gate needs Python 3 with scipy");
  if (r.exit_code != 0 && r.exit_code != 1 && r.exit_code != 3) {
    std::string err = r.err;
    if (err.size() > 2000) err = "..." + err.substr(err.size() - 2000);
    throw InputError(script + " failed (exit " + std::to_string(r.exit_code) + "): " + err);
  }
  result.exit_code = r.exit_code;
  result.text = r.out;
  std::ifstream in(verdicts.path());
  const json v = json::parse(in, nullptr, false);
  if (v.is_object() && v.contains("points")) {
    result.verdicts = v;
    std::set<Point> seen;
    for (const json& p : v["points"]) {
      if (p.value("verdict", "") != "undecided") continue;
      const Point k = Point::from_json(p["key"]);  // the key gate_document wrote (to_json)
      if (seen.insert(k).second) result.undecided.push_back(k);
    }
  }
  return result;
}

std::set<Point> blocks_of(const std::vector<Point>& points) {
  std::set<Point> out;
  for (const Point& p : points) {
    for (const Point& b : p.block()) out.insert(b);
  }
  return out;
}

std::string describe_points(const std::vector<Point>& points) {
  std::string s;
  for (const Point& p : points) s += (s.empty() ? "" : ", ") + p.describe();
  return s;
}

GateResult run_gate_with_reruns(GateFiles& f, const GateOptions& o, const RerunOptions& rr) {
  const int start_rounds = rounds_in(f.now);
  const int max_rounds = rr.max_repeats > 0 ? rr.max_repeats : 2 * start_rounds;
  if (!rr.config.empty()) {
    // CONFIG is read and checked now, whether or not a rerun turns out to be needed: a rerun
    // adds rounds of NEW's own points to NEW, so CONFIG must be able to continue NEW and run them.
    std::set<Point> held;
    for (const SweepEntry& e : f.now.entries) held.insert(e.point);
    SweepOptions so = rr.sweep;
    so.config_path = rr.config;
    so.out_path = f.now_path;
    so.resume = true;
    so.repeats = std::max(max_rounds, 1);
    so.only = [held](const SweepRun& r) { return held.count(r.point) > 0; };
    check_sweep_inputs(so);
  }
  const std::shared_ptr<SweepSession> session = std::make_shared<SweepSession>();  // one machine watch for every added round
  for (;;) {
    GateResult r = run_gate(f, o);
    const int rounds = rounds_in(f.now);
    if (r.exit_code != 3 || rr.config.empty() || r.undecided.empty() || rounds >= max_rounds) return r;
    const std::set<Point> wanted = blocks_of(r.undecided);
    const std::string what = describe_points(r.undecided);
    SweepOptions so = rr.sweep;
    so.config_path = rr.config;
    so.out_path = f.now_path;
    so.resume = true;
    so.session = session;
    so.repeats = std::min(max_rounds, rounds + 2);
    so.only = [wanted](const SweepRun& r) { return wanted.count(r.point) > 0; };
    std::cerr << "# dpscale compare: undecided at " << what << ": running rounds " << rounds + 1 << "-" << so.repeats
              << " of them (--rerun, at most " << max_rounds << " rounds)" << std::endl;
    const int rc = run_sweep(so);
    if (rc == 130) throw InputError("interrupted while adding rounds (--rerun)");
    f.now = read_nonempty(f.now_path);
  }
}

}  // namespace dpscale
