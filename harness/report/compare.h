// compare.h — `dpscale compare NEW.jsonl BASELINE.jsonl [--tolerance 0.10] [--absolute]`: the
// regression check a CI job runs against a committed scaling curve.
//
// Points are matched on their key (harness/point/point.h). A matched point regresses
// when, beyond the tolerance t,
//   speedup or efficiency falls:  new < base · (1 - t)     (relative: speedups differ by scale)
//   comm fraction rises:          new > base + t           (absolute: a fraction of the epoch;
//                                                          2% -> 3% is noise, not a +50% regression)
//   throughput falls (--absolute only, machines differ): new < base · (1 - t)
// A point that ran in the baseline but failed in NEW is a regression too. Points missing from
// NEW, or only in NEW, are reported and do not fail the comparison.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/report/analysis.h"

namespace dpscale {

struct CompareOptions {
  double tolerance = 0.10;
  bool absolute = false;
};

enum class Verdict { pass, regression, failed, missing, extra, incomparable };
const char* verdict_name(Verdict v);  // "ok" | "REGRESSION" | "FAILED" | "missing" | "extra" | "INCOMPARABLE"

struct ComparedPoint {
  Point point;
  Verdict verdict = Verdict::pass;
  std::vector<std::string> why;  // which metrics moved, e.g. "speedup -23.1%"
  const PointStats* base = nullptr;
  const PointStats* now = nullptr;
};

struct Comparison {
  std::vector<ComparedPoint> points;  // baseline order, then the extra points of NEW
  int compared = 0;                   // points present and successful in both
  bool failed() const;                // any regression / failed / incomparable, or nothing compared
};

// `now` and `base` must outlive the result (it points into them).
Comparison compare(const Analysis& now, const Analysis& base, const CompareOptions& o);

// The table of every point with its verdict, and a summary line.
std::string render_comparison(const Comparison& c, const CompareOptions& o, const std::string& now_path,
                              const std::string& base_path);

}  // namespace dpscale
