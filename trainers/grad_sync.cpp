// grad_sync.cpp — the shared finish(), the no-op strategy of train_single_gpu, and the factory.
#include "grad_sync.h"

#include "sync_strategies.h"

namespace dpscale {

GradSync::GradSync(Mlp& model, Communicator* comm)
    : model_(model), comm_(comm), timer_(comm ? model.device().make_interval_timer() : nullptr) {}

void GradSync::finish() {
  if (!comm_) return;
  timer_->start();  // queued after backward: the interval begins when backward has drained
  complete();
  timer_->stop();
  comm_->drain();  // outside the interval: the host checks on the collectives once per step
}

int64_t count_with_loss_slot(const ParamLayout& layout, int last_tensor, int64_t count) {
  const bool carries_loss = last_tensor + 1 == static_cast<int>(layout.tensors().size());
  return count + (carries_loss ? 1 : 0);
}

namespace {
class NoSync final : public GradSync {
 public:
  explicit NoSync(Mlp& model) : GradSync(model, nullptr) {}
  void on_grad_ready(const FlatTensor&) override {}
  SyncStats stats() const override { return {}; }

 private:
  void complete() override {}
};
}  // namespace

std::unique_ptr<GradSync> make_grad_sync(const TrainOptions& opts, Mlp& model, Communicator* comm) {
  switch (opts.mode) {
    case Mode::naive: return make_naive_sync(model, *comm, opts.fused);
    case Mode::interleaved: return make_interleaved_sync(model, *comm);
    case Mode::bucketed:
      return make_bucketed_sync(model, *comm, opts.bucket_cap_mb, opts.first_bucket_mb, parse_bucket_rule(opts.bucket_rule));
    default: return std::make_unique<NoSync>(model);
  }
}

}  // namespace dpscale
