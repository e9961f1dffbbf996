// step_probe.cpp — the per-step instruments of step_probe.h.
#include "trainers/diagnosis/step_probe.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <time.h>

#include "core/errors.h"
#include "core/median.h"
#include "trainers/diagnosis/build_slowdown.h"
#include "trainers/diagnosis/call_log_sampling.h"
#include "trainers/diagnosis/trace.h"

namespace dpscale {

namespace {
// This thread's CPU time (s): what a rank computed, whatever else the machine's cores ran.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
}  // namespace

StepProbe::StepProbe(RankSetup& s, GradSync& sync, Communicator* comm, Tracer* tracer)
    : s_(s), sync_(sync), comm_(comm), tracer_(tracer), delay_(parse_inject_delay(s.opts.inject_delay)),
      compute_timer_(s.device->make_interval_timer()) {
  delay_here_ = delay_.on(s.rank, DelayCause::compute);
  const BuildSlowdown slow = build_slowdown();
  if (!slow.data_parallel_only || comm_) build_slowdown_pct_ = slow.pct;
  if (build_slowdown_pct_ > 0 && s.rank == 0) {
    std::fprintf(stderr, "dpscale: this build's steps are %g%% slower on purpose (DPSCALE_BUILD_SLOWDOWN)\n",
                 build_slowdown_pct_);
  }
  // One BLAS thread computes on this thread: its CPU time is the rank's compute, free of the
  // time other processes took the core (on a shared machine, most of the wall clock's noise).
  cpu_clock_ = s.device->host_visible() && s.opts.device.threads == 1;
  if (comm_ && delay_.on(s.rank, DelayCause::link)) {
    for (const FlatTensor& t : s.model->layout().tensors()) link_floats_ += static_cast<size_t>(t.count);
    comm_->slow_link(delay_s(), link_floats_);
  }
  if (comm_) {
    comm_->take_call_log();  // nothing from before the timed steps
    comm_->log_calls(true);
    log_every_step_ = call_log_every_step(s.device->host_visible(), tracer_ != nullptr);
  }
  if (s.opts.loader_delay_ms > 0 || s.opts.prefetch > 0) {
    LoaderSource src;
    src.x = s.data.x.data();
    src.y = s.data.y.data();
    src.in_width = s.spec.in_width();
    src.y_width = s.spec.labels_per_sample();
    src.global_batch = s.opts.batch_size;
    src.local_batch = s.local_batch;
    src.rank = s.rank;
    // Batches, not optimizer steps: with --accum-steps N each step trains on N global batches.
    src.steps_per_epoch = s.steps_per_epoch * s.opts.accum_steps;
    lane_ = s.device->make_upload_lane();
    loader_ = std::make_unique<BatchLoader>(src, s.opts.loader_delay_ms, s.opts.prefetch, lane_.get());
    if (!s.device->host_visible()) {
      x_dev_ = DeviceBuffer<float>(*s.device, static_cast<size_t>(s.local_batch) * static_cast<size_t>(src.in_width));
      y_dev_ = DeviceBuffer<int32_t>(*s.device, static_cast<size_t>(s.local_batch) * static_cast<size_t>(src.y_width));
    }
  }
}

StepProbe::~StepProbe() {
  if (comm_) comm_->log_calls(false);
}

void StepProbe::start() {
  if (comm_) comm_->take_call_log();
  // The counts start here: threads born since construction (none, usually) are seen, and what
  // every thread lost in warm-up is read away.
  contention_.refresh_threads();
  contention_.read();
  epoch_contention_ = Contention{};
  if (tracer_) tracer_->set_origin();
}

StepProbe::Batch StepProbe::batch(int64_t batch_index) {
  ++step_;
  if (tracer_) tracer_->begin_step(step_);
  if (delay_.on(s_.rank, DelayCause::loader)) {
    // The injected slow loader: this rank's batch arrives MS late, a wait like the loader's.
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s()));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    injected_loader_s_ += waited;
    loader_step_s_ += waited;
  }
  if (!loader_) {
    const int64_t row0 = batch_index * s_.opts.batch_size + static_cast<int64_t>(s_.rank) * s_.local_batch;
    return Batch{s_.x + row0 * s_.spec.in_width(), s_.y + row0 * s_.spec.labels_per_sample()};
  }
  if (tracer_) tracer_->mark(Track::loader);
  // The previous upload must have read its slot before the loader may refill it (next() frees
  // it); the step that trained on it has read its losses back since, so this is over at once.
  if (lane_) lane_->wait_read();
  const double before = loader_->wait_seconds();
  StagedBatch staged = loader_->next();
  loader_step_s_ += loader_->wait_seconds() - before;
  Batch b{staged.x, staged.y};
  if (lane_) {
    // A GPU trains on device memory: the staged rows go up on the lane's copy stream, and the
    // compute stream waits for them on the device (upload_lane.h) — no host synchronisation.
    lane_->upload(x_dev_.data(), staged.x, x_dev_.nbytes());
    lane_->upload(y_dev_.data(), staged.y, y_dev_.nbytes());
    lane_->end_batch();
    b = Batch{x_dev_.data(), y_dev_.data()};
  }
  if (tracer_) tracer_->span(Track::loader, "loader: wait for batch", {});
  return b;
}

void StepProbe::compute_begin() {
  // Between steps, with nothing in flight: the communicator's anchor is recorded on an idle stream.
  logged_ = call_log_on(compute_steps_++, log_every_step_);
  if (comm_ && !log_every_step_) comm_->log_calls(logged_);
  first_grad_ = true;
  if (delay_here_) owed_s_ = 0.0;
  step_begin_ = std::chrono::steady_clock::now();
  if (cpu_clock_) cpu_begin_s_ = thread_cpu_s();
  compute_delay_begin_s_ = compute_thread_.seconds();
  compute_timer_->start();
  if (tracer_) tracer_->mark(Track::compute);
}

void StepProbe::backward_begin() {
  if (tracer_) tracer_->span(Track::compute, "forward + loss", {});
}

void StepProbe::on_grad_ready(const FlatTensor& t) {
  if (delay_here_) {
    // The injected straggler: this rank's backward computes MS longer, spread over its
    // gradients so that every all-reduce of the step starts late, as a slow device's would. The
    // extra work is CPU time spent spinning (a sleep would free the core, and is no compute);
    // what one spin overshoots is taken off the next, so the step's total stays MS.
    owed_s_ += delay_s() / static_cast<double>(s_.model->layout().tensors().size());
    if (owed_s_ > 0) {
      const double t0 = thread_cpu_s();
      while (thread_cpu_s() - t0 < owed_s_) {
      }
      owed_s_ -= thread_cpu_s() - t0;
    }
  }
  first_grad_ = false;
  if (tracer_) tracer_->grad_ready(t);
  sync_.on_grad_ready(t);
}

void StepProbe::compute_end() {
  compute_timer_->stop();
  if (cpu_clock_) step_cpu_.push_back(thread_cpu_s() - cpu_begin_s_);
  step_compute_delay_.push_back(compute_thread_.seconds() - compute_delay_begin_s_);
  if (tracer_) tracer_->mark(Track::compute);
}

void StepProbe::sync_done() {
  if (s_.device->host_visible()) {
    // The host clock costs nothing to read per step; a GPU's events would need a host sync.
    step_compute_.push_back(compute_timer_->take_seconds());
    compute_sum_s_ += step_compute_.back();
  }
  step_loader_.push_back(loader_step_s_);
  loader_step_s_ = 0.0;
  const auto now = std::chrono::steady_clock::now();
  if (last_sync_ != std::chrono::steady_clock::time_point{}) {
    cycles_.push_back(std::chrono::duration<double>(now - last_sync_).count());
  }
  last_sync_ = now;
  if (link_floats_ > 0) comm_->slow_link(delay_s(), link_floats_);
  if (!comm_) return;
  if (tracer_) tracer_->span(Track::compute, "wait in finish() (exposed all-reduce)", {});
}

void StepProbe::step_drained() {
  if (build_slowdown_pct_ > 0) {
    // A build slower by PCT (build_slowdown.h): this step's own time so far, from its first
    // forward to its drained all-reduces, is stretched by PCT in CPU time spent spinning, on
    // every rank and every timed step — the first included, which a share of recent steps misses.
    const double owed = build_slowdown_pct_ / 100.0 *
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_begin_).count();
    const double t0 = thread_cpu_s();
    while (thread_cpu_s() - t0 < owed) {
    }
  }
  // The step's one read of the rank's threads (contention.h): from the last step's end to this one's.
  const Contention c = contention_.read();
  step_run_delay_.push_back(c.run_delay_s);
  epoch_contention_.run_delay_s += c.run_delay_s;
  epoch_contention_.involuntary_switches += c.involuntary_switches;
  if (tracer_) tracer_->contention(c.run_delay_s, c.involuntary_switches);
  if (!comm_ || !logged_) return;
  const std::vector<CallTiming> calls = comm_->take_call_log();
  double link = 0.0;
  for (const CallTiming& c : calls) link += c.link_s;
  step_link_.push_back(link);
  // Each call's bytes in the wire format, as the record counts them (GradSync::wire_bytes).
  std::vector<int64_t> bytes;
  for (const CallTiming& c : calls) bytes.push_back(sync_.wire_bytes(c.data, static_cast<int64_t>(c.count)));
  if (tracer_) tracer_->add_calls(calls, bytes);
  if (unit_bytes_.empty()) {
    unit_bytes_ = bytes;
    unit_durations_.resize(calls.size());
  }
  if (calls.size() != unit_bytes_.size()) return;  // not this run's step shape: not counted
  for (size_t i = 0; i < calls.size(); ++i) unit_durations_[i].push_back(calls[i].end_s - calls[i].start_s);
}

double StepProbe::recent_step_s() const {
  if (cycles_.empty()) return 0.0;
  const size_t n = std::min<size_t>(cycles_.size(), 9);
  std::vector<double> last(cycles_.end() - static_cast<std::ptrdiff_t>(n), cycles_.end());
  std::sort(last.begin(), last.end());
  return last[n / 2];
}

double StepProbe::delay_s() const {
  if (delay_.ms > 0) return delay_.ms / 1e3;
  // A share of the step: of the median of this rank's last few step times (sync to sync, the
  // delay included), so a machine that slows down mid-run keeps the share. None before the
  // first step has been timed.
  return delay_.pct / 100.0 * recent_step_s();
}

std::vector<int64_t> StepProbe::unit_bytes() const { return unit_bytes_; }

std::vector<double> StepProbe::unit_median_s() const {
  std::vector<double> out;
  for (std::vector<double> d : unit_durations_) {
    std::sort(d.begin(), d.end());
    out.push_back(d.empty() ? 0.0 : d[d.size() / 2]);
  }
  return out;
}

void StepProbe::optimizer_begin() {
  if (tracer_) tracer_->mark(Track::compute);
}

void StepProbe::optimizer_end() {
  if (!tracer_) return;
  tracer_->span(Track::compute, "optimizer (SGD)", {});
  tracer_->end_step();
}

namespace {
// The 10th percentile: a rank's CPU time per step only grows with what the machine does to it
// (caches another process evicted), so its fast steps are its own speed.
double low_quantile(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 10];
}
}  // namespace

Contention StepProbe::take_epoch_contention() {
  Contention c = epoch_contention_;
  const Contention tail = contention_.read();
  c.run_delay_s += tail.run_delay_s;
  c.involuntary_switches += tail.involuntary_switches;
  contention_.refresh_threads();
  epoch_contention_ = Contention{};
  return c;
}

RankTiming StepProbe::totals() {
  RankTiming t;
  t.compute_s = compute_sum_s_ + compute_timer_->take_seconds();
  t.loader_s = injected_loader_s_ + (loader_ ? loader_->take_wait_seconds() : 0.0);
  if (!step_cpu_.empty()) {
    t.compute_med_s = low_quantile(step_cpu_);
  } else if (!step_compute_.empty()) {
    t.compute_med_s = median(step_compute_);
  } else if (!step_loader_.empty()) {
    t.compute_med_s = t.compute_s / static_cast<double>(step_loader_.size());  // a GPU: the mean
  }
  t.loader_med_s = median(step_loader_);
  t.link_med_s = median(step_link_);
  t.run_delay_med_s = median(step_run_delay_);
  t.contention_read = contention_.available();
  t.compute_delay_med_s = median(step_compute_delay_);
  t.compute_is_cpu_time = !step_cpu_.empty();
  return t;
}

}  // namespace dpscale
