// progress.h — the sweep's progress line on stderr: run i of n, what runs, elapsed, time left.
//
// The estimate weighs each run by its model's parameter count (a run's time grows roughly with
// it at fixed samples and epochs), so a sweep that starts with the small model does not promise
// to finish in a minute: left = elapsed · (weight still to run) / (weight already run).
#pragma once

#include <string>
#include <vector>

namespace dpscale {

class Progress {
 public:
  explicit Progress(std::vector<double> weights) : weights_(std::move(weights)) {}

  // `i` is 0-based; `elapsed_s` since the sweep started.
  std::string starting(size_t i, const std::string& what, double elapsed_s) const;
  void finished(size_t i) { done_ += weights_.at(i); }
  // Seconds still to go, or a negative number before anything has run.
  double eta_s(size_t next, double elapsed_s) const;

 private:
  std::vector<double> weights_;
  double done_ = 0;  // weight of the runs finished in this invocation (not resumed ones)
};

// 75 -> "1m15s", 3725 -> "1h02m", 9 -> "9s".
std::string fmt_duration(double s);

// A model's weight for the estimate: its parameter count (1 if it cannot be parsed).
double model_weight(const std::string& model);

}  // namespace dpscale
