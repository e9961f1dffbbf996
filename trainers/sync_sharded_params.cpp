// sync_sharded_params.cpp — sharded data parallelism whose all-gathers feed the forward:
// ZeRO stage 3 (FSDP's FULL_SHARD) and stage 2 (FSDP's SHARD_GRAD_OP). Each rank updates only
// block r of every unit (shard_plan.h) and the updated blocks are all-gathered when the next
// forward reads them, not after the update, so the gathers run beside forward's compute; each
// unit's gradient is reduce-scattered as backward completes it and released but for the rank's
// block once the call has completed (polled at every later tensor, the rest after backward).
//
//   stage 3   units: the model's layers (layer_units). Forward: the model asks for a tensor
//             (ParamGate::param_needed); its layer is waited for (all-gathered on demand if no
//             prefetch asked for it), the --prefetch-units next layers of the pass are queued
//             behind it, and the layer the pass left is released. Backward: the same in
//             backward order (the layout's); the layer forward ended with stays whole into
//             backward, as FSDP's last block does. So between steps a rank holds its blocks alone.
//   stage 2   units: bucketed's buckets. As forward begins every unit's all-gather is queued, in
//             the order forward reads them, and each is waited for where forward first reads
//             it; parameters then stay whole through backward (nothing gathered twice).
//   update    each rank its blocks (its optimizer state alone), nothing gathered: the next
//             forward gathers what it reads.
//
// Stage 3's root units (the tensors of no layer: the transformer's ln_f, and its embeddings,
// whose wte the tied head reads at the end of forward and the start of backward) are gathered
// as forward begins and stay whole for the step, as FSDP keeps its root module's parameters.
// Released means the pages go back to the system (Device::release_pages: the CPU backend's
// madvise), so what a rank holds is measured by its RSS, not only counted; stage 3 needs a
// backend that releases (refused before the job starts otherwise), stage 2 on one that does not
// holds its gradients whole (and counts them so). The record's *_bytes_per_rank are this
// strategy's own count of what it left resident at its peak, the steady state's (the steps
// after the first update: before it every rank holds its initial whole copy), to the page the
// release rounds to.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "shard_plan.h"
#include "sync_strategies.h"

namespace dpscale {

namespace {

// Test hook (tests/trainers/test_sharded_params.cpp), inert unless set: stage 3's backward
// reads its layers as forward released them, without the all-gather before backward, which
// must train wrong. (The hooks both sharded strategies share: shard_plan.h.)
bool skips_backward_gather_for_test() {
  const char* v = std::getenv("DPSCALE_TEST_SHARD_NO_BACKWARD_GATHER");
  return v && *v && std::string(v) != "0";
}

class ParamShardedSync final : public GradSync, public ParamGate {
 public:
  ParamShardedSync(Model& model, Communicator& comm, const ParamShardSetup& setup)
      : GradSync(model, &comm), setup_(setup), stage3_(setup.stage == 3),
        releases_(model.device().page_bytes() > 0),
        units_(stage3_ ? layer_units(model.layout())
                       : assign_buckets(model.layout(), setup.bucket_cap_mb, setup.first_bucket_mb, setup.rule)),
        plan_(plan_shards(model.layout(), units_, comm.world_size(), shard_skew_for_test())),
        unit_of_(model.layout().tensors().size()), n_(plan_.units.size()), pending_(n_), root_(n_),
        held_(n_, Held::whole), gather_(n_), scatter_(n_), grad_live_(n_),
        ag_timer_(model.device().make_interval_timer()) {
    const std::vector<FlatTensor>& ts = model.layout().tensors();
    for (size_t u = 0; u < n_; ++u) {
      const ShardUnit& unit = plan_.units[u];
      for (int t = unit.first_tensor; t <= unit.last_tensor; ++t) unit_of_[static_cast<size_t>(t)] = u;
      root_[u] = stage3_ && ts[static_cast<size_t>(unit.first_tensor)].layer < 0;
      if (!root_[u]) backward_order_.push_back(u);
    }
    forward_order_.assign(backward_order_.rbegin(), backward_order_.rend());
    // Every rank starts with the whole initial parameters (the start-up check compares them);
    // the first forward releases them unit by unit.
    param_live_ = model.layout().param_buffer_count();
    grad_live_floats_ = plan_.shard_floats();
    model.set_param_gate(this);
  }

  ~ParamShardedSync() override { model_.set_param_gate(nullptr); }

  // --- ParamGate: what forward and backward read ---
  void forward_begins() override {
    backward_ = false;
    if (!stage3_) {
      for (size_t u : forward_order_) issue(u);  // every stale unit, in the order forward reads them
      return;
    }
    release_current();
    for (size_t u = 0; u < n_; ++u) {
      if (root_[u]) issue(u);
    }
    for (int i = 0; i < setup_.prefetch_units && i < static_cast<int>(forward_order_.size()); ++i) issue(forward_order_[static_cast<size_t>(i)]);
  }

  void backward_begins() override {
    backward_ = true;
    if (!stage3_) return;  // every unit whole since forward
    // The unit forward ended with is backward's first: kept whole, as FSDP's last block.
    if (!backward_order_.empty() && current_ != backward_order_.front()) release_current();
    current_ = kNone;
    for (size_t u = 0; u < n_; ++u) {
      if (root_[u]) mark_grad_live(u);  // the tied head writes wte's gradient first
    }
  }

  void param_needed(const FlatTensor& t) override {
    const size_t u = unit_of_[static_cast<size_t>(t.index)];
    if (root_[u] || !stage3_) {
      make_whole(u);
      return;
    }
    if (u == current_) return;
    release_current();
    current_ = u;
    const std::vector<size_t>& order = backward_ ? backward_order_ : forward_order_;
    const size_t at = static_cast<size_t>(std::find(order.begin(), order.end(), u) - order.begin());
    issue(u);
    for (int i = 1; i <= setup_.prefetch_units && at + static_cast<size_t>(i) < order.size(); ++i) issue(order[at + static_cast<size_t>(i)]);
    make_whole(u);
    if (backward_) release_scattered(false);
  }

  // --- GradListener: what backward completes ---
  void begin_step() override {
    for (size_t u = 0; u < n_; ++u) pending_[u] = plan_.units[u].last_tensor - plan_.units[u].first_tensor + 1;
  }

  void on_grad_ready(const FlatTensor& t) override {
    const size_t u = unit_of_[static_cast<size_t>(t.index)];
    mark_grad_live(u);
    if (--pending_[u] == 0) {
      const ShardUnit& unit = plan_.units[u];
      scatter_[u] = comm_->reduce_scatter_sum(model_.grads() + unit.offset, static_cast<size_t>(unit.count));
      if (u + 1 == n_) comm_->allreduce_sum(model_.grads() + model_.layout().loss_slot(), 1);
    }
    release_scattered(false);
  }

  void update(bool check_finite) override {
    float* flag = model_.nonfinite_flag();
    update_own_blocks(*optimizer_, model_, plan_, comm_->rank(), check_finite ? flag : nullptr);
    comm_->allreduce_sum(flag, 1);  // every rank's verdict is every rank's
    comm_->finish();
    // Whatever is still whole holds the step before's values: released, gathered anew when read.
    current_ = kNone;
    for (size_t u = 0; u < n_; ++u) release_params(u);
    // The steady state's peak: every step after the first update (which began from whole copies).
    if (updates_ > 0) {
      peak_param_floats_ = std::max(peak_param_floats_, step_peak_param_);
      peak_grad_floats_ = std::max(peak_grad_floats_, step_peak_grad_);
      gathered_floats_last_step_ = gathered_floats_step_;
    }
    ++updates_;
    step_peak_param_ = param_live_;
    step_peak_grad_ = grad_live_floats_;
    gathered_floats_step_ = 0;
  }

  // The epochs are over: every unit gathered and the gate taken off, so the replica check, the
  // evaluation and the checkpoint read whole parameters.
  void end_training() override {
    for (size_t u = 0; u < n_; ++u) issue(u);
    for (size_t u = 0; u < n_; ++u) make_whole(u);
    comm_->finish();
    model_.set_param_gate(nullptr);
  }

  double take_allgather_wait_seconds() override { return ag_timer_->take_seconds(); }

  SyncStats stats() const override {
    SyncStats s;
    s.shard_stage = setup_.stage;
    s.n_buckets = static_cast<int>(n_);
    if (stage3_) {
      s.prefetch_units = setup_.prefetch_units;
    } else {
      s.bucket_cap_mb = setup_.bucket_cap_mb;
      s.first_bucket_mb = setup_.first_bucket_mb;
    }
    float* grads = model_.grads();
    for (const ShardUnit& u : plan_.units) {
      s.bucket_bytes.push_back(wire_bytes(grads + u.offset, u.count));
      s.reduce_scatter_bytes_per_step += wire_bytes(grads + u.offset, u.count);
    }
    s.allgather_bytes_per_step = gathered_floats_last_step_ * static_cast<int64_t>(sizeof(float));
    s.floats_per_step = 2;  // the loss slot and the finite-check flag
    s.bytes_per_step = wire_bytes(grads + model_.layout().loss_slot(), 1) + static_cast<int64_t>(sizeof(float));
    s.calls_per_step = 2;
    return s;
  }

  // What the rank held at the steady state's peak (the record's *_bytes_per_rank), counted.
  int64_t resident_param_bytes() const override {
    if (!stage3_ || peak_param_floats_ == 0) return bytes(model_.layout().param_buffer_count());
    return bytes(peak_param_floats_);
  }
  int64_t resident_grad_bytes() const override {
    // Accumulated micro-batches keep every gradient whole until the last one's reduce-scatter;
    // a device that releases no pages keeps all of them.
    if (setup_.accum_steps > 1 || !releases_ || peak_grad_floats_ == 0) return bytes(model_.layout().grad_buffer_count());
    return bytes(peak_grad_floats_ + 1);  // + the loss slot
  }

 protected:
  int64_t state_floats() const override { return plan_.shard_floats(); }

 private:
  enum class Held { shard, gathering, whole };
  static constexpr size_t kNone = static_cast<size_t>(-1);
  static int64_t bytes(int64_t floats) { return floats * static_cast<int64_t>(sizeof(float)); }

  void complete() override {
    comm_->finish();
    release_scattered(true);
  }

  // Queues unit u's all-gather unless it is whole or on its way.
  void issue(size_t u) {
    if (held_[u] != Held::shard) return;
    const ShardUnit& unit = plan_.units[u];
    if ((backward_ && no_backward_gather_) || no_allgather_) {
      held_[u] = Held::whole;  // the controls: read what the release or the last step left
      return;
    }
    gather_[u] = comm_->allgather(model_.params() + unit.offset, static_cast<size_t>(unit.count));
    held_[u] = Held::gathering;
    gathered_floats_step_ += unit.count;
    if (stage3_) param_live_ += unit.count - unit.block;
    step_peak_param_ = std::max(step_peak_param_, param_live_);
  }

  // Waits (the exposed all-gather time) until unit u is whole.
  void make_whole(size_t u) {
    issue(u);
    if (held_[u] != Held::gathering) return;
    ag_timer_->start();
    gather_[u]->wait();
    ag_timer_->stop();
    gather_[u].reset();
    held_[u] = Held::whole;
  }

  void release_current() {
    if (current_ != kNone) release_params(current_);
    current_ = kNone;
  }

  // Unit u's parameters back to its block: the pages outside rank r's block returned.
  // Stage 2 keeps the pages (the next forward's all-gather overwrites them): only stale.
  void release_params(size_t u) {
    if (held_[u] == Held::shard) return;
    if (held_[u] == Held::gathering) make_whole(u);  // the call still writes there
    held_[u] = Held::shard;
    if (!stage3_) return;
    release_outside_block(model_.params(), u);
    param_live_ -= plan_.units[u].count - plan_.units[u].block;
  }

  void mark_grad_live(size_t u) {
    if (grad_live_[u]) return;
    grad_live_[u] = true;
    grad_live_floats_ += plan_.units[u].count - plan_.units[u].block;
    step_peak_grad_ = std::max(step_peak_grad_, grad_live_floats_);
  }

  // Gradients whose reduce-scatter has completed: released but for the rank's block (`all`:
  // after the wait for every call, the rest).
  void release_scattered(bool all) {
    for (size_t u = 0; u < n_; ++u) {
      if (!scatter_[u] || (!all && !scatter_[u]->done())) continue;
      scatter_[u].reset();
      release_outside_block(model_.grads(), u);
      if (grad_live_[u]) grad_live_floats_ -= plan_.units[u].count - plan_.units[u].block;
      grad_live_[u] = false;
    }
  }

  void release_outside_block(float* buffer, size_t u) {
    if (!releases_) return;
    const ShardUnit& unit = plan_.units[u];
    const int64_t mine = unit.block_offset(comm_->rank());
    Device& dev = model_.device();
    dev.release_pages(buffer + unit.offset, mine - unit.offset);
    dev.release_pages(buffer + mine + unit.block, unit.offset + unit.count - (mine + unit.block));
  }

  ParamShardSetup setup_;
  bool stage3_;
  bool releases_;  // the device gives pages back (Device::release_pages)
  std::vector<Bucket> units_;
  ShardPlan plan_;
  std::vector<size_t> unit_of_;  // tensor index -> unit
  size_t n_;
  std::vector<int> pending_;  // tensors not yet written, per unit, this step
  std::vector<bool> root_;    // gathered at the start of forward, whole for the step
  std::vector<size_t> forward_order_, backward_order_;  // the layers' units, root left out
  std::vector<Held> held_;
  std::vector<std::unique_ptr<Work>> gather_, scatter_;
  std::vector<bool> grad_live_;  // this step's gradient written outside the rank's block
  size_t current_ = kNone;       // the layer unit forward or backward is in
  bool backward_ = false;
  int64_t param_live_ = 0, grad_live_floats_ = 0;  // floats resident, counted
  int64_t step_peak_param_ = 0, step_peak_grad_ = 0, peak_param_floats_ = 0, peak_grad_floats_ = 0;
  int64_t gathered_floats_step_ = 0, gathered_floats_last_step_ = 0;
  int64_t updates_ = 0;
  std::unique_ptr<IntervalTimer> ag_timer_;
  bool no_backward_gather_ = skips_backward_gather_for_test();
  bool no_allgather_ = shard_skips_allgather_for_test();
};

}  // namespace

std::unique_ptr<GradSync> make_param_sharded_sync(Model& model, Communicator& comm, const ParamShardSetup& setup) {
  return std::make_unique<ParamShardedSync>(model, comm, setup);
}

}  // namespace dpscale
