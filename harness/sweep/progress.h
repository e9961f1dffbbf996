// progress.h — the sweep's progress line on stderr: run i of n, what runs, elapsed, time left.
//
// The estimate fits each finished run's duration as t = a + b·w, w its model's parameter count:
// a is what every run pays whatever its size (mpirun start-up, data, warm-up), b·w the training
// that grows with the model. A plain "elapsed × weight left / weight done" would take the small
// model's runs, which are nearly all start-up, for the rate of everything after them.
#pragma once

#include <string>
#include <vector>

namespace dpscale {

class Progress {
 public:
  explicit Progress(std::vector<double> weights) : weights_(std::move(weights)) {}

  // `i` is 0-based; `elapsed_s` since the sweep started.
  std::string starting(size_t i, const std::string& what, double elapsed_s) const;
  void finished(size_t i, double seconds) { done_.push_back({weights_.at(i), seconds}); }
  // Runs planned after those counted so far (a session that adds rounds): counted on from there.
  void add(const std::vector<double>& weights) { weights_.insert(weights_.end(), weights.begin(), weights.end()); }
  // Seconds the runs from `next` on should take, or a negative number before any has finished.
  double eta_s(size_t next) const;

 private:
  struct Done {
    double weight, seconds;
  };
  std::vector<double> weights_;
  std::vector<Done> done_;  // runs finished in this invocation (resumed ones took no time)
};

// 75 -> "1m15s", 3725 -> "1h02m", 9 -> "9s".
std::string fmt_duration(double s);

// A model's weight for the estimate: its parameter count (1 if it cannot be parsed).
double model_weight(const std::string& model);

}  // namespace dpscale
