// table.cpp — Markdown/CSV rendering and number formats.
#include "harness/common/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dpscale {

namespace {

// Display width in characters: UTF-8 continuation bytes take no column (γ, ×, ±, →).
size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t width, bool right) {
  const size_t w = columns(s);
  const std::string fill(width > w ? width - w : 0, ' ');
  return right ? fill + s : s + fill;
}

}  // namespace

std::string Table::markdown() const {
  std::vector<size_t> w(header.size(), 3);
  for (size_t c = 0; c < header.size(); ++c) w[c] = std::max(w[c], columns(header[c]));
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], columns(r[c]));
  }
  auto is_right = [&](size_t c) { return c < right.size() && right[c]; };
  std::string out;
  auto cell = [&](const std::string& text) {
    out += ' ';
    out += text;
    out += " |";
  };
  out += '|';
  for (size_t c = 0; c < header.size(); ++c) cell(pad(header[c], w[c], is_right(c)));
  out += "\n|";
  for (size_t c = 0; c < header.size(); ++c) cell(is_right(c) ? std::string(w[c] - 1, '-') + ':' : std::string(w[c], '-'));
  out += '\n';
  for (const auto& r : rows) {
    out += '|';
    for (size_t c = 0; c < header.size(); ++c) cell(pad(c < r.size() ? r[c] : "", w[c], is_right(c)));
    out += '\n';
  }
  return out;
}

std::string Table::csv() const {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& r) {
    for (size_t c = 0; c < r.size(); ++c) {
      if (c) out += ',';
      out += cell(r[c]);
    }
    out += "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

std::string fmt_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_opt(const std::optional<double>& v, int decimals, const std::string& suffix) {
  return v ? fmt_fixed(*v, decimals) + suffix : "—";
}

std::string fmt_thousands(double v) {
  const long long n = std::llround(v);
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string fmt_params(int64_t n) {
  if (n >= 1'000'000) return fmt_fixed(static_cast<double>(n) / 1e6, 1) + "M";
  if (n >= 1'000) return fmt_fixed(static_cast<double>(n) / 1e3, 1) + "K";
  return std::to_string(n);
}

std::string fmt_percent(double fraction, int decimals) { return fmt_fixed(100.0 * fraction, decimals) + "%"; }

std::string fmt_signed_percent(double fraction) {
  std::string s = fraction >= 0 ? "+" : "";
  s += fmt_fixed(100.0 * fraction, 1);
  return s + "%";
}

}  // namespace dpscale
