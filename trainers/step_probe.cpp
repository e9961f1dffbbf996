// step_probe.cpp — the per-step instruments of step_probe.h.
#include "step_probe.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "models/errors.h"
#include "trace.h"

namespace dpscale {

StepProbe::StepProbe(RankSetup& s, GradSync& sync, Communicator* comm, Tracer* tracer)
    : s_(s), sync_(sync), comm_(comm), tracer_(tracer), delay_(parse_inject_delay(s.opts.inject_delay)),
      compute_timer_(s.device->make_interval_timer()) {
  delay_here_ = delay_.enabled() && delay_.rank == s.rank;
  if (comm_) {
    comm_->take_call_log();  // nothing from before the timed steps
    comm_->log_calls(true);
  }
  if (s.opts.loader_delay_ms > 0 || s.opts.prefetch > 0) {
    LoaderSource src;
    src.x = s.data.x.data();
    src.y = s.data.y.data();
    src.in_width = s.spec.in_width();
    src.global_batch = s.opts.batch_size;
    src.local_batch = s.local_batch;
    src.rank = s.rank;
    // Batches, not optimizer steps: with --accum-steps N each step trains on N global batches.
    src.steps_per_epoch = s.steps_per_epoch * s.opts.accum_steps;
    lane_ = s.device->make_upload_lane();
    loader_ = std::make_unique<BatchLoader>(src, s.opts.loader_delay_ms, s.opts.prefetch, lane_.get());
    if (!s.device->host_visible()) {
      x_dev_ = DeviceBuffer<float>(*s.device, static_cast<size_t>(s.local_batch) * static_cast<size_t>(src.in_width));
      y_dev_ = DeviceBuffer<int32_t>(*s.device, static_cast<size_t>(s.local_batch));
    }
  }
}

StepProbe::~StepProbe() {
  if (comm_) comm_->log_calls(false);
}

void StepProbe::start() {
  if (comm_) comm_->take_call_log();
  if (tracer_) tracer_->set_origin();
}

StepProbe::Batch StepProbe::batch(int64_t batch_index) {
  ++step_;
  if (tracer_) tracer_->begin_step(step_);
  if (!loader_) {
    const int64_t row0 = batch_index * s_.opts.batch_size + static_cast<int64_t>(s_.rank) * s_.local_batch;
    return Batch{s_.x + row0 * s_.spec.in_width(), s_.y + row0};
  }
  if (tracer_) tracer_->mark(Track::loader);
  // The previous upload must have read its slot before the loader may refill it (next() frees
  // it); the step that trained on it has read its losses back since, so this is over at once.
  if (lane_) lane_->wait_read();
  StagedBatch staged = loader_->next();
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
  first_grad_ = true;
  compute_timer_->start();
  if (tracer_) tracer_->mark(Track::compute);
}

void StepProbe::backward_begin() {
  if (tracer_) tracer_->span(Track::compute, "forward + loss", {});
}

void StepProbe::on_grad_ready(const FlatTensor& t) {
  if (first_grad_ && delay_here_) {
    // The injected straggler: this rank's backward takes MS longer, so its gradients are late.
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_.ms));
  }
  first_grad_ = false;
  if (tracer_) tracer_->grad_ready(t);
  sync_.on_grad_ready(t);
}

void StepProbe::compute_end() {
  compute_timer_->stop();
  if (tracer_) tracer_->mark(Track::compute);
}

void StepProbe::sync_done() {
  if (!comm_) return;
  if (tracer_) tracer_->span(Track::compute, "wait in finish() (exposed all-reduce)", {});
}

void StepProbe::step_drained() {
  if (!comm_) return;
  const std::vector<CallTiming> calls = comm_->take_call_log();
  if (tracer_) tracer_->add_calls(calls);
  if (unit_bytes_.empty()) {
    for (const CallTiming& c : calls) unit_bytes_.push_back(static_cast<int64_t>(c.count * sizeof(float)));
    unit_durations_.resize(calls.size());
  }
  if (calls.size() != unit_bytes_.size()) return;  // not this run's step shape: not counted
  for (size_t i = 0; i < calls.size(); ++i) unit_durations_[i].push_back(calls[i].end_s - calls[i].start_s);
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

RankTiming StepProbe::totals() {
  RankTiming t;
  t.compute_s = compute_timer_->take_seconds();
  t.loader_s = loader_ ? loader_->take_wait_seconds() : 0.0;
  return t;
}

void check_diagnosis_options(const TrainOptions& o, int world_size, Backend) {
  const InjectDelay d = parse_inject_delay(o.inject_delay);
  if (!o.trace_path.empty()) {
    std::filesystem::path dir = std::filesystem::path(o.trace_path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir)) throw InputError("--trace: directory '" + dir.string() + "' does not exist");
  }
  if (d.enabled() && d.rank >= world_size) {
    throw InputError("--inject-delay: rank " + std::to_string(d.rank) + " does not exist (the job has " +
                     std::to_string(world_size) + " ranks: 0.." + std::to_string(world_size - 1) + ")");
  }
}

}  // namespace dpscale
