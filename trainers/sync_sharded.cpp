// sync_sharded.cpp — ZeRO stage 1: each rank updates only its shard (shard_plan.h: block r of
// every unit, the units bucketed's buckets) and keeps optimizer state for it alone; the
// gradients are all-reduced as bucketed does (each unit in place as backward completes it), and
// the updated shards are all-gathered after the update, so every rank starts the next forward
// with every parameter. (Stages 2 and 3, whose all-gathers feed the next forward instead:
// sync_sharded_params.cpp.)
//
// The all-gathers are waited for before the step ends (their time is `allgather_exposed_s`:
// nothing overlaps them). The step's finite check: each rank's update pass flags its own
// blocks, and the flag is summed over the ranks (a one-float all-reduce after the all-gathers,
// every step), so every rank stops at the same step.
//
// Bytes per step (B = the parameter buffer's bytes, padding included; b = its wire format):
// all-reduce B_b + 4 (the slot rides in the last unit), all-gather B, + 4 (the flag): each rank
// sends 2(K-1)/K of the all-reduce's bytes and (K-1)/K of the all-gather's, 1.5× bucketed's.
// The memory a rank holds: the model's buffers (parameters and gradients whole) and optimizer
// state for B/K.
#include "shard_plan.h"
#include "sync_strategies.h"

namespace dpscale {

namespace {

class ShardedSync final : public GradSync {
 public:
  ShardedSync(Model& model, Communicator& comm, double cap_mb, double first_mb, BucketRule rule)
      : GradSync(model, &comm), cap_mb_(cap_mb), first_mb_(first_mb),
        buckets_(assign_buckets(model.layout(), cap_mb, first_mb, rule)),
        plan_(plan_shards(model.layout(), buckets_, comm.world_size(), shard_skew_for_test())),
        unit_of_(model.layout().tensors().size()), pending_(plan_.units.size()),
        ag_timer_(model.device().make_interval_timer()) {
    for (size_t u = 0; u < plan_.units.size(); ++u) {
      for (int t = plan_.units[u].first_tensor; t <= plan_.units[u].last_tensor; ++t) unit_of_[static_cast<size_t>(t)] = u;
    }
  }

  void begin_step() override {
    for (size_t u = 0; u < plan_.units.size(); ++u) pending_[u] = plan_.units[u].last_tensor - plan_.units[u].first_tensor + 1;
  }

  void on_grad_ready(const FlatTensor& t) override {
    const size_t u = unit_of_[static_cast<size_t>(t.index)];
    if (--pending_[u] > 0) return;
    const ShardUnit& unit = plan_.units[u];
    float* g = model_.grads() + unit.offset;
    const bool last = u + 1 == plan_.units.size();
    // The last unit ends where the loss slot is: it rides along, as in bucketed.
    comm_->allreduce_sum(g, static_cast<size_t>(unit.count + (last ? 1 : 0)));
  }

  void update(bool check_finite) override {
    float* flag = model_.nonfinite_flag();
    update_own_blocks(*optimizer_, model_, plan_, comm_->rank(), check_finite ? flag : nullptr);
    ag_timer_->start();
    if (!no_allgather_) {
      for (const ShardUnit& u : plan_.units) comm_->allgather(model_.params() + u.offset, static_cast<size_t>(u.count));
    }
    comm_->allreduce_sum(flag, 1);  // every rank's verdict is every rank's
    comm_->finish();
    ag_timer_->stop();
  }

  double take_allgather_wait_seconds() override { return ag_timer_->take_seconds(); }

  SyncStats stats() const override {
    SyncStats s;
    const int64_t n_units = static_cast<int64_t>(plan_.units.size());
    s.shard_stage = 1;
    s.n_buckets = static_cast<int>(n_units);
    s.bucket_cap_mb = cap_mb_;
    s.first_bucket_mb = first_mb_;
    float* grads = model_.grads();
    for (const ShardUnit& u : plan_.units) {
      const bool last = &u == &plan_.units.back();
      s.bucket_bytes.push_back(wire_bytes(grads + u.offset, u.count));
      s.allgather_bytes_per_step += u.count * static_cast<int64_t>(sizeof(float));
      const int64_t n = u.count + (last ? 1 : 0);
      s.floats_per_step += n;
      s.bytes_per_step += wire_bytes(grads + u.offset, n);
    }
    s.floats_per_step += 1;  // the finite-check flag
    s.bytes_per_step += static_cast<int64_t>(sizeof(float));
    // one all-reduce per unit and the flag's, then the all-gathers
    s.calls_per_step = static_cast<int>(n_units + 1);
    return s;
  }

 protected:
  int64_t state_floats() const override { return plan_.shard_floats(); }

 private:
  void complete() override { comm_->finish(); }

  double cap_mb_, first_mb_;
  std::vector<Bucket> buckets_;
  ShardPlan plan_;
  std::vector<size_t> unit_of_;  // tensor index -> unit
  std::vector<int> pending_;     // tensors not yet written, per unit, this step
  std::unique_ptr<IntervalTimer> ag_timer_;
  bool no_allgather_ = shard_skips_allgather_for_test();
};

}  // namespace

std::unique_ptr<GradSync> make_sharded_sync(Model& model, Communicator& comm, double bucket_cap_mb,
                                            double first_bucket_mb, BucketRule rule) {
  return std::make_unique<ShardedSync>(model, comm, bucket_cap_mb, first_bucket_mb, rule);
}

}  // namespace dpscale
