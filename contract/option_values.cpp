// option_values.cpp — checked parsing of option values; the complaint names the bound broken.
#include "option_values.h"

#include <charconv>
#include <cmath>

namespace dpscale {

namespace {

std::string quoted(const std::string& text) { return "'" + text + "'"; }

[[noreturn]] void out_of_range(const std::string& bound, const std::string& text) {
  throw ValueError(bound + " (got " + text + ")");
}

}  // namespace

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string or_list(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += i + 1 == items.size() ? " or " : ", ";
    s += items[i];
  }
  return s;
}

int64_t parse_whole(const std::string& text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) {
    out_of_range(text[0] == '-' ? "must be at least " + std::to_string(lo) : "must be at most " + std::to_string(hi),
                 text);
  }
  if (text.empty() || ec != std::errc() || p != end) throw ValueError("must be a whole number (got " + quoted(text) + ")");
  if (v < lo) out_of_range(lo == 0 ? "must not be negative" : "must be at least " + std::to_string(lo), text);
  if (v > hi) out_of_range("must be at most " + std::to_string(hi), text);
  return v;
}

uint64_t parse_unsigned(const std::string& text) {
  if (!text.empty() && text[0] == '-') out_of_range("must not be negative", text);
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) out_of_range("must be at most 18446744073709551615", text);
  if (text.empty() || ec != std::errc() || p != end) throw ValueError("must be a whole number (got " + quoted(text) + ")");
  return v;
}

double parse_real(const std::string& text, Bound lo, Bound hi) {
  double v = 0.0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  // from_chars reports overflow (1e999) as out of range and leaves v unset: that is not finite.
  if (ec == std::errc::result_out_of_range) throw ValueError("must be a finite number (got " + text + ")");
  if (text.empty() || ec != std::errc() || p != end) throw ValueError("must be a number (got " + quoted(text) + ")");
  if (!std::isfinite(v)) throw ValueError("must be a finite number (got " + text + ")");
  if (lo.inclusive ? v < lo.value : v <= lo.value) {
    if (!lo.inclusive) {
      out_of_range(lo.value == 0 ? "must be a positive number" : "must be > " + format_number(lo.value), text);
    }
    out_of_range(lo.value == 0 ? "must not be negative" : "must be at least " + format_number(lo.value), text);
  }
  if (hi.inclusive ? v > hi.value : v >= hi.value) {
    out_of_range((hi.inclusive ? "must be at most " : "must be below ") + format_number(hi.value), text);
  }
  return v;
}

size_t parse_choice(const std::string& text, const std::vector<std::string>& choices, const std::string& what) {
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == text) return i;
  }
  throw ValueError("unknown " + what + " " + quoted(text) + " (use " + or_list(choices) + ")");
}

void parse_nonempty(const std::string& text) {
  if (text.empty()) throw ValueError("must not be empty");
}

}  // namespace dpscale
