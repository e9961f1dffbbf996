// bisect_verdict.h — what one A/B session of `dpscale bisect` says, read from gate.py's verdicts
// (its --format json document, GateResult::verdicts): which way BAD moved against GOOD and on
// which curves, and whether a midpoint moved the same way on those curves.
//
// A curve is one of ab's ("throughput small bucketed", "speedup small bucketed 50:300"); its
// verdict is gate.py's (regression, improvement, same, undecided). BAD's regressions are the
// direction when it has any, else its improvements. A midpoint has `moved` when one of the
// curves BAD moved on moved the same way, `undecided` when none did and one of them is
// undecided, `same` otherwise (a move the other way, or on another curve, is not BAD's change).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/bisect/bisect_search.h"

namespace dpscale::bisect {

enum class Direction { none, regression, improvement, undecided };

std::string direction_name(Direction d);

struct BadReading {
  Direction direction = Direction::none;  // none: BAD is the same as GOOD; undecided: could not tell
  std::vector<std::string> curves;        // the curves that moved that way
};

BadReading read_bad(const nlohmann::json& verdicts);

StepVerdict read_step(const nlohmann::json& verdicts, const BadReading& bad);

// "throughput small bucketed: regression -9.8% [-12.0%, -7.5%]; ..." for the curves BAD moved on
// (every curve when `curves` is empty).
std::string describe_curves(const nlohmann::json& verdicts, const std::vector<std::string>& curves);

}  // namespace dpscale::bisect
