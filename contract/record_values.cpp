// record_values.cpp — the ranges of record_values.h, field by field.
#include "record_values.h"

#include <cmath>
#include <stdexcept>

#include "contract/option_values.h"

namespace dpscale {

namespace {

// One range: above zero (or at least zero), finite.
struct Range {
  bool zero_allowed;
  double max = INFINITY;
};
constexpr Range kPositive{false};
constexpr Range kNonNegative{true};

std::string got(double v) { return std::isnan(v) ? "null" : format_number(v); }

void check(const char* field, double v, Range r) {
  const bool ok = std::isfinite(v) && (r.zero_allowed ? v >= 0 : v > 0) && v <= r.max;
  if (ok) return;
  std::string want = r.zero_allowed ? "a non-negative number" : "a positive number";
  if (r.max < INFINITY) want += " up to " + format_number(r.max);
  throw std::runtime_error(std::string("record field '") + field + "' must be " + want + " (got " + got(v) + ")");
}
void check(const char* field, const std::optional<double>& v, Range r) {
  if (v) check(field, *v, r);
}
void check(const char* field, const std::vector<double>& v, Range r) {
  for (double x : v) check(field, x, r);
}
void check_count(const char* field, int64_t v, int64_t lo) {
  if (v < lo) {
    throw std::runtime_error(std::string("record field '") + field + "' must be at least " + std::to_string(lo) +
                             " (got " + std::to_string(v) + ")");
  }
}

}  // namespace

void check_record_values(const RunRecord& r) {
  check_count("world_size", r.world_size, 1);
  check_count("n_nodes", r.n_nodes, 1);
  check_count("n_params", r.n_params, 1);
  check_count("global_batch", r.global_batch, 1);
  check_count("local_batch", r.local_batch, 1);
  check_count("n_samples", r.n_samples, 1);
  check_count("epochs", r.epochs, 1);
  check_count("steps_per_epoch", r.steps_per_epoch, 0);
  check_count("steps", r.steps, 0);
  check_count("threads", r.threads, 1);
  if (r.epoch_times_s.empty()) throw std::runtime_error("record field 'epoch_times_s' holds no epoch");
  check("epoch_times_s", r.epoch_times_s, kPositive);
  check("avg_epoch_s", r.avg_epoch_s, kPositive);
  check("throughput_samples_per_s", r.throughput_samples_per_s, kNonNegative);
  check("tokens_per_s", r.tokens_per_s, kNonNegative);
  check_count("seq_len", r.seq_len, 0);
  check_count("tensor_count", r.tensor_count, 0);
  check_count("largest_tensor_bytes", r.largest_tensor_bytes, 0);
  check("lr", r.lr, kPositive);
  check("test_accuracy", r.test_accuracy, {true, 1.0});
  check("link_alpha_us", r.link_alpha_us, kNonNegative);
  check("link_gbps", r.link_gbps, kPositive);
  check("link_dilation", r.link_dilation, kPositive);
  check("comm_s", r.comm_s, kNonNegative);
  check("exposed_comm_s", r.exposed_comm_s, kNonNegative);
  check("comm_busy_s", r.comm_busy_s, kNonNegative);
  check("compute_s", r.compute_s, kNonNegative);
  check_count("allreduce_calls_per_step", r.allreduce_calls_per_step, 0);
  check_count("allreduce_bytes_per_step", r.allreduce_bytes_per_step, 0);
  check("bucket_cap_mb", r.bucket_cap_mb, kPositive);
  check("first_bucket_mb", r.first_bucket_mb, kPositive);
  check("per_rank_epoch_s", r.per_rank_epoch_s, kNonNegative);
  check("per_rank_compute_s", r.per_rank_compute_s, kNonNegative);
  check("per_rank_wait_s", r.per_rank_wait_s, kNonNegative);
  check("loader_s", r.loader_s, kNonNegative);
  check("loader_delay_ms", r.loader_delay_ms, kNonNegative);
  check("triad_step_s", r.triad_step_s, kNonNegative);
  check("compute_only_step_s", r.compute_only_step_s, kNonNegative);
  check("comm_only_step_s", r.comm_only_step_s, kNonNegative);
  check("overlap_pct", r.overlap_pct, {true, 100.0});
  if (r.accum_steps) check_count("accum_steps", *r.accum_steps, 1);
  if (r.straggler_rank && (*r.straggler_rank < 0 || *r.straggler_rank >= r.world_size)) {
    throw std::runtime_error("record field 'straggler_rank' must name one of the " + std::to_string(r.world_size) +
                             " ranks (got " + std::to_string(*r.straggler_rank) + ")");
  }
}

}  // namespace dpscale
