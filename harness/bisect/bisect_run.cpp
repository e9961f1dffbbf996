// bisect_run.cpp — the bisection itself (bisect.h): GOOD and BAD built and A/B-tested, the
// direction read, then the search (bisect_search.h) with builds and sessions as its judge.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "contract/record.h"
#include "harness/bisect/bisect.h"
#include "harness/bisect/bisect_build.h"
#include "harness/bisect/bisect_search.h"
#include "harness/bisect/bisect_verdict.h"
#include "harness/sweep/config.h"

namespace dpscale::bisect {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Interrupted {};

// One A/B session of the bisection: A = GOOD, B = `c`.
struct Session {
  int exit_code = 0;
  json verdicts;
  std::string out_dir;
};

class Bisection {
 public:
  Bisection(BisectOptions o, BisectPlan p) : o_(std::move(o)), p_(std::move(p)) {
    build_.repo = p_.repo;
    build_.work = p_.work;
    build_.targets = p_.targets;
    build_.jobs = o_.jobs > 0 ? o_.jobs : std::max(1u, std::thread::hardware_concurrency());
    sessions_ = (fs::path(p_.work) / "sessions" / utc_now("%Y%m%d-%H%M%S")).string();
  }

  int run();

 private:
  const Commit& good() const { return p_.commits.front(); }
  const Commit& bad() const { return p_.commits.back(); }
  std::ostream& steps_out() const { return o_.format == "json" ? std::cerr : std::cout; }
  std::string name(const Commit& c) const { return c.short_id() + " " + c.subject; }

  // The trainers of `c`, built (or found built); "" when it does not build (said).
  std::string built(const Commit& c, const std::string& role);
  Session session(const Commit& c, const std::string& bin, int attempt);
  void step_line(const Commit& c, const std::string& role, int attempt, const std::string& verdict,
                 const std::string& detail, const Session* s);
  int finish(const std::string& outcome, int code, const std::string& line, const Commit* first = nullptr);

  BisectOptions o_;
  BisectPlan p_;
  BuildPlan build_;
  std::string sessions_, good_bin_;
  BadReading bad_;
  json steps_ = json::array();
  int step_no_ = 0;
};

std::string Bisection::built(const Commit& c, const std::string& role) {
  std::cerr << "# dpscale bisect: building " << role << " " << name(c) << std::endl;
  const BuildOutcome b = build_revision(build_, c);
  if (b.ok) {
    std::cerr << "# dpscale bisect: " << c.short_id() << " built in " << static_cast<int>(b.seconds) << " s" << std::endl;
    return b.bin_dir;
  }
  step_line(c, role, 0, "does not build", b.why + " (" + b.log + ")", nullptr);
  return "";
}

Session Bisection::session(const Commit& c, const std::string& bin, int attempt) {
  AbOptions a = attempt_options(o_.ab, attempt);
  a.config_path = p_.config_path;
  a.a_dir = good_bin_;
  a.b_dir = bin;
  a.gate.format = "md";
  Session s;
  s.out_dir = (fs::path(sessions_) / (std::to_string(step_no_ + 1) + "-" + c.short_id() + (attempt ? "-retry" : ""))).string();
  a.out_dir = s.out_dir;
  std::cerr << "# dpscale bisect: A/B " << good().short_id() << " against " << c.short_id() << " (" << a.rounds << " to "
            << a.max_rounds << " rounds), results in " << s.out_dir << std::endl;
  const GateResult r = run_ab_session(a);
  if (r.exit_code == 130) throw Interrupted{};
  std::ofstream(fs::path(s.out_dir) / "verdicts.md") << r.text;
  s.exit_code = r.exit_code;
  s.verdicts = r.verdicts;
  return s;
}

void Bisection::step_line(const Commit& c, const std::string& role, int attempt, const std::string& verdict,
                          const std::string& detail, const Session* s) {
  ++step_no_;
  steps_out() << "step " << step_no_ << ": " << name(c) << " (" << role << (attempt ? ", retried with twice the rounds" : "")
              << "): " << verdict << (detail.empty() ? "" : " — " + detail) << std::endl;
  json j = {{"step", step_no_}, {"commit", c.id}, {"subject", c.subject}, {"role", role}, {"attempt", attempt},
            {"verdict", verdict}, {"detail", detail}};
  if (s) {
    j["session"] = s->out_dir;
    j["ab_exit"] = s->exit_code;
  }
  steps_.push_back(j);
}

int Bisection::finish(const std::string& outcome, int code, const std::string& line, const Commit* first) {
  if (o_.format == "json") {
    json doc = {{"good", good().id}, {"bad", bad().id}, {"revisions", p_.commits.size()},
                {"direction", direction_name(bad_.direction)}, {"curves", bad_.curves}, {"steps", steps_},
                {"outcome", outcome}, {"message", line}, {"exit", code}};
    doc["first_moved"] = first ? json{{"commit", first->id}, {"subject", first->subject}} : json(nullptr);
    std::cout << doc.dump(1) << std::endl;
  } else {
    std::cout << line << std::endl;
  }
  return code;
}

int Bisection::run() {
  steps_out() << "# dpscale bisect: GOOD " << name(good()) << ", BAD " << name(bad()) << ": " << p_.commits.size() - 2
              << " revision(s) between, at most " << max_steps(static_cast<int>(p_.commits.size()))
              << " midpoint(s) to test; config " << p_.config_path << std::endl;
  good_bin_ = built(good(), "GOOD");
  if (good_bin_.empty()) throw InputError("GOOD " + good().short_id() + " does not build: bisect measures against it");
  const std::string bad_bin = built(bad(), "BAD");
  if (bad_bin.empty()) throw InputError("BAD " + bad().short_id() + " does not build: bisect needs its curve");

  // BAD against GOOD: which curves moved, and which way.
  bad_ = judge_with_retry<BadReading>(
      [&](int attempt) {
        const Session s = session(bad(), bad_bin, attempt);
        const BadReading b = read_bad(s.verdicts);
        step_line(bad(), "BAD", attempt, direction_name(b.direction), describe_curves(s.verdicts, b.curves), &s);
        return b;
      },
      [](const BadReading& b) { return b.direction == Direction::undecided; });
  if (bad_.direction == Direction::none) {
    return finish("nothing", 3, "nothing to find: BAD " + bad().short_id() + " is the same as GOOD " + good().short_id() +
                                    " on every curve (exit 3)");
  }
  if (bad_.direction == Direction::undecided) {
    return finish("undecided", 3, "nothing to bisect: BAD " + bad().short_id() + " stayed undecided against GOOD after " +
                                      "twice the rounds; the machine could not tell them apart (exit 3)");
  }
  steps_out() << "# following BAD's " << direction_name(bad_.direction) << " on: " << [&] {
    std::string s;
    for (const std::string& c : bad_.curves) s += (s.empty() ? "" : ", ") + c;
    return s;
  }() << std::endl;

  const int n = static_cast<int>(p_.commits.size());
  const SearchResult r = bisect_search(n, [&](int i, int attempt) {
    const Commit& c = p_.commits[static_cast<size_t>(i)];
    const std::string bin = attempt == 0 ? built(c, "midpoint") : bin_dir(build_, c);
    if (bin.empty()) return StepVerdict::unbuildable;
    const Session s = session(c, bin, attempt);
    const StepVerdict v = read_step(s.verdicts, bad_);
    step_line(c, "midpoint", attempt, v == StepVerdict::moved ? "moved (" + direction_name(bad_.direction) + ")" : verdict_name(v),
              describe_curves(s.verdicts, bad_.curves), &s);
    return v;
  });
  const Commit& g = p_.commits[static_cast<size_t>(r.good)];
  const Commit& m = p_.commits[static_cast<size_t>(r.moved)];
  switch (r.outcome) {
    case SearchOutcome::found: {
      const Commit& first = p_.commits[static_cast<size_t>(r.first_moved)];
      return finish("found", 0, "first revision whose curve moved: " + first.id + " " + first.subject, &first);
    }
    case SearchOutcome::undecided:
      return finish("undecided", 3, "stopped: " + p_.commits[static_cast<size_t>(r.stuck_at)].short_id() +
                                        " stayed undecided after twice the rounds; the first revision whose curve moved is "
                                        "after " + g.short_id() + " and at or before " + m.short_id() + " (exit 3)");
    case SearchOutcome::all_skipped: {
      std::string between;
      for (int i = r.good + 1; i < r.moved; ++i) between += " " + p_.commits[static_cast<size_t>(i)].short_id();
      return finish("all_skipped", 3, "every revision between " + g.short_id() + " and " + m.short_id() +
                                          " does not build (" + between.substr(1) + "): the first revision whose curve "
                                          "moved is one of them or " + m.short_id() + " (exit 3)");
    }
  }
  return 3;
}

}  // namespace

AbOptions attempt_options(const AbOptions& ab, int attempt) {
  AbOptions a = ab;
  // The retry of an undecided step: twice the rounds, as twice the samples halve the interval's
  // width by about √2.
  if (attempt > 0) {
    a.rounds = std::min(kMaxRepeats, 2 * a.rounds);
    a.max_rounds = std::min(kMaxRepeats, 2 * a.max_rounds);
  }
  return a;
}

int run_bisect(BisectOptions o) {
  BisectPlan p = check_bisect_inputs(o);
  if (o.dry_run) {
    std::cout << "# dpscale bisect (dry run): " << p.commits.size() << " revisions, GOOD first, BAD last; targets";
    for (const std::string& t : p.targets) std::cout << " " << t;
    std::cout << "; work " << p.work << "\n";
    for (const Commit& c : p.commits) std::cout << c.id << " " << c.subject << "\n";
    std::cout << std::flush;
    return 0;
  }
  std::error_code ec;
  fs::create_directories(p.work, ec);
  try {
    return Bisection(std::move(o), std::move(p)).run();
  } catch (const Interrupted&) {
    std::cerr << "dpscale bisect: interrupted" << std::endl;
    return 130;
  }
}

}  // namespace dpscale::bisect
