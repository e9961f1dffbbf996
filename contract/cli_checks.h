// cli_checks.h — CLI11 validators built on the contract's checked parsers (option_values.h), so
// a command-line flag of `dpscale` is refused with the same words as a config key or a trainer
// option, at parse time, one line naming the flag (CLI11 prefixes "--flag: "), and a range is
// stated as it was given (CLI11's own PositiveNumber printed a 300-digit one). Header-only: the
// programs that parse with CLI11 include it; the contract's library does not need CLI11 for it.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "contract/option_values.h"
#include "core/errors.h"

namespace dpscale {

// A validator whose check is `parse(text)`: a ValueError's text or an OptionError's complaint
// is the refusal (the flag's own name is CLI11's to add). `what` is the help's value shape.
inline CLI::Validator checked_by(std::function<void(const std::string&)> parse, const std::string& what) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          parse(text);
        } catch (const OptionError& e) {
          return e.complaint();
        } catch (const ValueError& e) {
          return e.what();
        }
        return "";
      },
      what);
}

// A whole number in [lo, hi]; the message states the range.
inline CLI::Validator whole_in(int64_t lo, int64_t hi) {
  const std::string range = "allowed " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        try {
          parse_whole(text, lo, hi);
        } catch (const ValueError& e) {
          return std::string(e.what()) + "; " + range;
        }
        return "";
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// A finite real number within the bounds; `what` says them ("in (0, 0.5]").
inline CLI::Validator real_in(Bound lo, Bound hi, const std::string& what) {
  return CLI::Validator(
      [lo, hi, what](std::string& text) -> std::string {
        try {
          parse_real(text, lo, hi);
        } catch (const ValueError& e) {
          return std::string(e.what()) + "; allowed " + what;
        }
        return "";
      },
      what);
}

}  // namespace dpscale
