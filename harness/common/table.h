// table.h — a small text table rendered as Markdown or CSV, and the number formats the report
// and compare share (the workshop's "0.0361s", "908,941/s", "1.00×", "1.5M").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dpscale {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> right;  // per column: right-aligned (numbers)

  std::string markdown() const;  // aligned pipes, readable as plain text too
  std::string csv() const;       // RFC 4180 quoting
};

std::string fmt_fixed(double v, int decimals);
std::string fmt_opt(const std::optional<double>& v, int decimals, const std::string& suffix = "");
std::string fmt_thousands(double v);     // 908941.2 -> "908,941"
std::string fmt_params(int64_t n);       // 1462538 -> "1.5M"
std::string fmt_percent(double fraction, int decimals = 0);  // 0.473 -> "47%"
std::string fmt_signed_percent(double fraction);             // -0.123 -> "-12.3%"

}  // namespace dpscale
