// diagnosis_options.cpp — parsing of --inject-delay and --trace-steps.
#include "diagnosis_options.h"

#include "option_values.h"

namespace dpscale {

namespace {
// "A:B" split at its one colon; ValueError with `form` when there is none.
std::pair<std::string, std::string> split_colon(const std::string& text, const std::string& form) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) {
    throw ValueError("must be " + form + " (got '" + text + "')");
  }
  return {text.substr(0, colon), text.substr(colon + 1)};
}
}  // namespace

const char* cause_name(DelayCause c) {
  switch (c) {
    case DelayCause::loader: return "loader";
    case DelayCause::link: return "link";
    default: return "compute";
  }
}

InjectDelay parse_inject_delay(const std::string& text) {
  if (text.empty()) return {};
  const std::string form = "RANK:MS[:compute|loader|link], e.g. 1:150 or 1:10%:link";
  std::string head = text;
  InjectDelay d;
  if (const auto last = text.rfind(':'); last != std::string::npos && text.find(':') != last) {
    const std::string cause = text.substr(last + 1);
    head = text.substr(0, last);
    if (cause == "loader") {
      d.cause = DelayCause::loader;
    } else if (cause == "link") {
      d.cause = DelayCause::link;
    } else if (cause != "compute") {
      throw ValueError("must be " + form + ": the cause is compute, loader or link (got '" + text + "')");
    }
  }
  const auto [rank, ms] = split_colon(head, form);
  try {
    d.rank = static_cast<int>(parse_whole(rank, 0, 1 << 20));
    if (!ms.empty() && ms.back() == '%') {
      d.pct = parse_real(ms.substr(0, ms.size() - 1), {0.0, false}, {1000.0});
    } else {
      d.ms = parse_real(ms, {0.0, false}, {600000.0});
    }
  } catch (const ValueError&) {
    throw ValueError("must be " + form + " with RANK ≥ 0, 0 < MS ≤ 600000 or 0 < PCT% ≤ 1000% (got '" + text + "')");
  }
  return d;
}

TraceSteps parse_trace_steps(const std::string& text) {
  const std::string form = "A:B, the first and last timed step to trace, e.g. 3:4";
  const auto [a, b] = split_colon(text, form);
  TraceSteps s;
  try {
    s.first = parse_whole(a, 1, INT64_MAX / 2);
    s.last = parse_whole(b, 1, INT64_MAX / 2);
  } catch (const ValueError&) {
    throw ValueError("must be " + form + " (got '" + text + "')");
  }
  if (s.last < s.first) throw ValueError("must be A:B with A ≤ B (got '" + text + "')");
  if (s.last - s.first + 1 > kMaxTraceSteps) {
    throw ValueError("covers " + std::to_string(s.last - s.first + 1) + " steps; a trace takes at most " +
                     std::to_string(kMaxTraceSteps) + " (got '" + text + "')");
  }
  return s;
}

}  // namespace dpscale
