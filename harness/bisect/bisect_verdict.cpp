// bisect_verdict.cpp — BAD's direction and a midpoint's step from gate.py's verdicts (bisect_verdict.h).
#include "harness/bisect/bisect_verdict.h"

#include <algorithm>
#include <cstdio>

#include "harness/common/table.h"

namespace dpscale::bisect {

using nlohmann::json;

namespace {

const json* curve_named(const json& verdicts, const std::string& name) {
  if (!verdicts.contains("curves")) return nullptr;
  for (const json& c : verdicts["curves"]) {
    if (c.value("curve", "") == name) return &c;
  }
  return nullptr;
}

// gate.py writes effects in percent; the table's formatter takes a fraction.
std::string pct(double percent) { return fmt_signed_percent(percent / 100.0); }

}  // namespace

std::string direction_name(Direction d) {
  switch (d) {
    case Direction::none: return "same";
    case Direction::regression: return "regression";
    case Direction::improvement: return "improvement";
    case Direction::undecided: return "undecided";
  }
  return "?";
}

BadReading read_bad(const json& verdicts) {
  BadReading r;
  std::vector<std::string> regressed, improved;
  bool undecided = false;
  if (verdicts.contains("curves")) {
    for (const json& c : verdicts["curves"]) {
      const std::string v = c.value("verdict", ""), name = c.value("curve", "");
      if (v == "regression") regressed.push_back(name);
      if (v == "improvement") improved.push_back(name);
      if (v == "undecided") undecided = true;
    }
  }
  if (!regressed.empty()) {
    r.direction = Direction::regression;
    r.curves = regressed;
  } else if (!improved.empty()) {
    r.direction = Direction::improvement;
    r.curves = improved;
  } else if (undecided) {
    r.direction = Direction::undecided;
  }
  return r;
}

StepVerdict read_step(const json& verdicts, const BadReading& bad) {
  const std::string want = direction_name(bad.direction);
  bool undecided = false;
  for (const std::string& name : bad.curves) {
    const json* c = curve_named(verdicts, name);
    // A curve BAD moved on that the step's A/B did not judge cannot be called the same.
    if (!c) {
      undecided = true;
      continue;
    }
    const std::string v = c->value("verdict", "");
    if (v == want) return StepVerdict::moved;
    if (v == "undecided") undecided = true;
  }
  return undecided ? StepVerdict::undecided : StepVerdict::same;
}

std::string describe_curves(const json& verdicts, const std::vector<std::string>& curves) {
  std::vector<std::string> names = curves;
  if (names.empty() && verdicts.contains("curves")) {
    for (const json& c : verdicts["curves"]) names.push_back(c.value("curve", ""));
  }
  std::string s;
  for (const std::string& name : names) {
    const json* c = curve_named(verdicts, name);
    // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on a literal + string chain here.
    if (!s.empty()) s.append("; ");
    s.append(name).append(": ").append(c ? c->value("verdict", "?") : "not judged");
    if (c && c->contains("effect_pct") && (*c)["effect_pct"].is_number()) {
      s.append(" ").append(pct((*c)["effect_pct"].get<double>()));
      if (c->contains("ci_pct") && (*c)["ci_pct"].is_array() && (*c)["ci_pct"].size() == 2 &&
          (*c)["ci_pct"][0].is_number() && (*c)["ci_pct"][1].is_number()) {
        s.append(" [").append(pct((*c)["ci_pct"][0].get<double>())).append(", ");
        s.append(pct((*c)["ci_pct"][1].get<double>())).append("]");
      }
    }
  }
  return s;
}

}  // namespace dpscale::bisect
