// sync_naive.cpp — naive data-parallel: backward runs to the end untouched; then a blocking
// all-reduce of every gradient tensor, one call per tensor as the workshop's loop does (or one
// call over the whole flat buffer with --fused). The whole phase is timed as comm.
#include <chrono>

#include "sync_strategies.h"

namespace dpscale {

namespace {

class NaiveSync final : public GradSync {
 public:
  NaiveSync(Mlp& model, Communicator& comm, bool fused) : model_(model), comm_(comm), fused_(fused) {}

  void on_grad_ready(const TensorView&) override {}

  void finish() override {
    model_.device().synchronize();  // compute has drained: what follows is pure comm
    const auto t0 = std::chrono::steady_clock::now();
    const ParamLayout& layout = model_.layout();
    if (fused_) {
      comm_.allreduce_sum_blocking(model_.grads(), static_cast<size_t>(layout.grad_buffer_count()));
    } else {
      for (const TensorView& t : layout.tensors()) {
        comm_.allreduce_sum_blocking(model_.grads() + t.offset,
                                     static_cast<size_t>(sync_extent(layout, t.index, t.count)));
      }
    }
    comm_.finish();
    wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  SyncStats stats() const override {
    const ParamLayout& layout = model_.layout();
    SyncStats s;
    s.calls_per_step = fused_ ? 1 : static_cast<int>(layout.tensors().size());
    s.bytes_per_step = layout.grad_buffer_count() * static_cast<int64_t>(sizeof(float));
    return s;
  }

 private:
  Mlp& model_;
  Communicator& comm_;
  bool fused_;
};

}  // namespace

std::unique_ptr<GradSync> make_naive_sync(Mlp& model, Communicator& comm, bool fused) {
  return std::make_unique<NaiveSync>(model, comm, fused);
}

}  // namespace dpscale
