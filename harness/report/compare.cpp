// compare.cpp — point matching, verdicts and the comparison table.
#include "harness/report/compare.h"

#include <algorithm>

#include "contract/modes.h"
#include "harness/report/report.h"
#include "harness/common/table.h"

namespace dpscale {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "ok";
    case Verdict::regression: return "REGRESSION";
    case Verdict::failed: return "FAILED";
    case Verdict::missing: return "missing";
    case Verdict::extra: return "extra";
    default: return "INCOMPARABLE";
  }
}

bool Comparison::failed() const {
  if (compared == 0) return true;
  return std::any_of(points.begin(), points.end(), [](const ComparedPoint& p) {
    return p.verdict == Verdict::regression || p.verdict == Verdict::failed || p.verdict == Verdict::incomparable;
  });
}

namespace {

void judge(ComparedPoint& c, const CompareOptions& o) {
  const PointStats &b = *c.base, &n = *c.now;
  const double t = o.tolerance;
  auto falls = [&](const char* what, const std::optional<double>& nv, const std::optional<double>& bv) {
    if (!nv || !bv || *bv <= 0) return;
    const double rel = *nv / *bv - 1.0;
    if (*nv < *bv * (1.0 - t)) c.why.push_back(std::string(what) + " " + fmt_signed_percent(rel));
  };
  if (c.point.mode->data_parallel) {
    if (b.speedup && !n.speedup) {
      c.verdict = Verdict::incomparable;
      c.why.push_back("no single run of " + c.point.model + " in the new file");
      return;
    }
    falls("speedup", n.speedup, b.speedup);
    falls("efficiency", n.efficiency, b.efficiency);
    if (n.comm_fraction && b.comm_fraction && *n.comm_fraction > *b.comm_fraction + t) {
      c.why.push_back("comm fraction " + fmt_percent(*b.comm_fraction) + " -> " + fmt_percent(*n.comm_fraction));
    }
  }
  if (o.absolute) falls("throughput", n.throughput.median, b.throughput.median);
  if (!c.why.empty()) c.verdict = Verdict::regression;
}

std::string arrow(const std::optional<double>& b, const std::optional<double>& n, int decimals,
                  const std::string& suffix = "") {
  if (!b && !n) return "—";
  return fmt_opt(b, decimals, suffix) + " → " + fmt_opt(n, decimals, suffix);
}
std::string arrow_pct(const std::optional<double>& b, const std::optional<double>& n) {
  if (!b && !n) return "—";
  auto p = [](const std::optional<double>& v) { return v ? fmt_percent(*v) : std::string("—"); };
  return p(b) + " → " + p(n);
}
std::string spread_text(const PointStats* p) {
  if (!p || p->runs < 2) return "";
  return "±" + fmt_percent(p->throughput.half_range(), 1);
}

}  // namespace

Comparison compare(const Analysis& now, const Analysis& base, const CompareOptions& o) {
  Comparison c;
  auto in = [](const std::vector<Point>& v, const Point& k) { return std::find(v.begin(), v.end(), k) != v.end(); };
  for (const PointStats& b : base.points) {
    ComparedPoint cp;
    cp.point = b.point;
    cp.base = &b;
    cp.now = now.find(b.point);
    if (!cp.now) {
      cp.verdict = in(now.failed_points, b.point) ? Verdict::failed : Verdict::missing;
      if (cp.verdict == Verdict::failed) cp.why.push_back("the run failed in the new file");
    } else {
      ++c.compared;
      judge(cp, o);
    }
    c.points.push_back(std::move(cp));
  }
  for (const PointStats& n : now.points) {
    if (base.find(n.point)) continue;
    c.points.push_back({n.point, Verdict::extra, {"not in the baseline"}, nullptr, &n});
  }
  return c;
}

std::string render_comparison(const Comparison& c, const CompareOptions& o, const std::string& now_path,
                              const std::string& base_path) {
  const bool any_repeat = std::any_of(c.points.begin(), c.points.end(), [](auto& p) {
    return (p.base && p.base->runs > 1) || (p.now && p.now->runs > 1);
  });
  std::vector<Point> points;
  for (const ComparedPoint& p : c.points) points.push_back(p.point);
  const KeyColumns cols = key_columns(points);
  Table t;
  t.header = {"Model", "Mode", "K"};
  for (const std::string& h : key_headers(cols)) t.header.push_back(h);
  for (const char* h : {"Speedup (base → new)", "E", "Comm %"}) t.header.push_back(h);
  if (o.absolute) t.header.push_back("Throughput/s");
  if (any_repeat) t.header.push_back("Spread base/new");
  t.header.push_back("Verdict");
  t.right.assign(t.header.size(), false);
  t.right[2] = true;

  for (const ComparedPoint& p : c.points) {
    auto get = [](const PointStats* s, auto f) { return s ? f(*s) : std::optional<double>(); };
    const auto sp = [](const PointStats& s) { return s.speedup; };
    const auto ef = [](const PointStats& s) { return s.efficiency; };
    const auto cf = [](const PointStats& s) { return s.comm_fraction; };
    const auto th = [](const PointStats& s) { return std::optional<double>(s.throughput.median); };
    std::vector<std::string> r = {p.point.model, p.point.mode->label, std::to_string(p.point.world_size)};
    for (const std::string& cell : key_cells(p.point, cols)) r.push_back(cell);
    r.push_back(arrow(get(p.base, sp), get(p.now, sp), 2, "×"));
    r.push_back(arrow(get(p.base, ef), get(p.now, ef), 2));
    r.push_back(arrow_pct(get(p.base, cf), get(p.now, cf)));
    if (o.absolute) {
      const auto b = get(p.base, th), n = get(p.now, th);
      r.push_back((b ? fmt_thousands(*b) : "—") + " → " + (n ? fmt_thousands(*n) : "—"));
    }
    if (any_repeat) r.push_back(spread_text(p.base) + " / " + spread_text(p.now));
    std::string verdict = verdict_name(p.verdict);
    for (size_t i = 0; i < p.why.size(); ++i) verdict += (i ? "; " : ": ") + p.why[i];
    r.push_back(verdict);
    t.rows.push_back(std::move(r));
  }

  int n_reg = 0, n_fail = 0, n_missing = 0, n_extra = 0, n_inc = 0;
  for (const ComparedPoint& p : c.points) {
    n_reg += p.verdict == Verdict::regression;
    n_fail += p.verdict == Verdict::failed;
    n_missing += p.verdict == Verdict::missing;
    n_extra += p.verdict == Verdict::extra;
    n_inc += p.verdict == Verdict::incomparable;
  }
  std::string out = "# dpscale compare: " + now_path + " against baseline " + base_path + " (tolerance " +
                    fmt_percent(o.tolerance) + (o.absolute ? ", throughput too" : "") + ")\n\n" + t.markdown() + "\n";
  out += "# " + std::to_string(c.compared) + " compared, " + std::to_string(n_reg) + " regressed, " +
         std::to_string(n_fail) + " failed, " + std::to_string(n_inc) + " incomparable, " + std::to_string(n_missing) +
         " missing, " + std::to_string(n_extra) + " extra: " + (c.failed() ? "FAIL" : "PASS") + "\n";
  if (c.compared == 0) out += "# no point of the baseline ran successfully in the new file\n";
  return out;
}

}  // namespace dpscale
