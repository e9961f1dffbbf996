// grad_sync.cpp — the shared helpers, the no-op strategy of train_single_gpu, and the factory.
#include "grad_sync.h"

#include "sync_strategies.h"

namespace dpscale {

int64_t sync_extent(const ParamLayout& layout, int last_tensor, int64_t count) {
  const bool carries_loss = last_tensor + 1 == static_cast<int>(layout.tensors().size());
  return count + (carries_loss ? 1 : 0);
}

namespace {
class NoSync final : public GradSync {
 public:
  void on_grad_ready(const TensorView&) override {}
  void finish() override {}
  SyncStats stats() const override { return {}; }
};
}  // namespace

std::unique_ptr<GradSync> make_grad_sync(const TrainOptions& opts, Mlp& model, Communicator* comm) {
  switch (opts.mode) {
    case Mode::naive: return make_naive_sync(model, *comm, opts.fused);
    case Mode::interleaved: return make_interleaved_sync(model, *comm);
    case Mode::bucketed: return make_bucketed_sync(model, *comm, opts.bucket_cap_mb, opts.first_bucket_mb);
    default: return std::make_unique<NoSync>();
  }
}

}  // namespace dpscale
