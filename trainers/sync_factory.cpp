// sync_factory.cpp — make_grad_sync, and the no-op strategy of train_single_gpu.
#include "sync_factory.h"

#include "sync_strategies.h"

namespace dpscale {

namespace {
class NoSync final : public GradSync {
 public:
  explicit NoSync(Model& model) : GradSync(model, nullptr) {}
  void on_grad_ready(const FlatTensor&) override {}
  SyncStats stats() const override { return {}; }

 private:
  void complete() override {}
};

std::unique_ptr<GradSync> make_strategy(const TrainOptions& opts, Model& model, Communicator* comm) {
  switch (opts.mode) {
    case Mode::naive: return make_naive_sync(model, *comm, opts.fused);
    case Mode::interleaved: return make_interleaved_sync(model, *comm);
    case Mode::bucketed:
      return make_bucketed_sync(model, *comm, opts.bucket_cap_mb, opts.first_bucket_mb, parse_bucket_rule(opts.bucket_rule));
    case Mode::sharded:
      if (opts.shard_stage == 3) return make_param_sharded_sync(model, *comm, opts.prefetch_units, opts.accum_steps);
      return make_sharded_sync(model, *comm, opts.shard_stage, opts.bucket_cap_mb, opts.first_bucket_mb,
                               parse_bucket_rule(opts.bucket_rule));
    default: return std::make_unique<NoSync>(model);
  }
}

}  // namespace

OptimizerConfig optimizer_config(const TrainOptions& o) {
  OptimizerConfig c;
  c.kind = parse_optimizer(o.optimizer);
  c.lr = o.lr;
  c.momentum = o.momentum;
  c.weight_decay = o.weight_decay;
  return c;
}

std::unique_ptr<GradSync> make_grad_sync(const TrainOptions& opts, Model& model, Communicator* comm) {
  std::unique_ptr<GradSync> sync = make_strategy(opts, model, comm);
  // Every strategy all-reduces every gradient once a step, in the one wire format.
  if (comm) sync->use_grad_format(parse_grad_format(opts.grad_comm));
  sync->use_optimizer(optimizer_config(opts));
  return sync;
}

}  // namespace dpscale
