// option_values.h — the checked parse of every value a flag or a config gives: whole numbers,
// real numbers and names. One parse for the trainers, the harness and the benchmarks, so a value
// is refused the same way, with the same words, wherever it is given.
//
// Each function throws ValueError whose text is a complaint that reads after the option's name:
// "must be at least 1 (got 0)", "must be a number (got 'fast')", "must be a positive number
// (got -0.1)". The caller names the option (OptionError, core/errors.h).
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpscale {

class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bound of a real range: value and whether the bound itself is allowed.
struct Bound {
  double value;
  bool inclusive = true;
};
inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// A whole number in [lo, hi], written in decimal without sign tricks ("1e3" and "12x" are not).
int64_t parse_whole(const std::string& text, int64_t lo, int64_t hi);
// A non-negative whole number up to 2^64 - 1 (seeds).
uint64_t parse_unsigned(const std::string& text);
// A finite real number within [lo, hi] (either end open when !inclusive).
double parse_real(const std::string& text, Bound lo, Bound hi = {kNoLimit, true});
// The index of `text` in `choices`; else "unknown <what> 'x' (use a, b or c)".
size_t parse_choice(const std::string& text, const std::vector<std::string>& choices, const std::string& what);
// Non-empty text (paths).
void parse_nonempty(const std::string& text);

// "a, b or c"
std::string or_list(const std::vector<std::string>& items);
// Shortest text that reads back as the same double: 0.5 -> "0.5", 25 -> "25".
std::string format_number(double v);

}  // namespace dpscale
