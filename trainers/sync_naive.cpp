// sync_naive.cpp — naive data-parallel: backward runs to the end untouched; then an all-reduce
// of every gradient tensor, one call per tensor as the workshop's loop does (or one call over
// the whole flat buffer with --fused), and a wait for all of them: the whole phase is comm_s.
// The calls run one after another on the comm thread (stream) either way, so queueing them all
// before waiting costs the same as waiting after each, and on a GPU it keeps the host off the
// stream, as PyTorch's NCCL all_reduce does. They are queued as one batch: nothing is computed
// between them, so the comm stream is ordered after backward once, not once a call.
#include <vector>

#include "sync_strategies.h"

namespace dpscale {

namespace {

class NaiveSync final : public GradSync {
 public:
  // Per tensor: the tensors and the slot; fused: the whole buffer, its zero padding included.
  NaiveSync(Model& model, Communicator& comm, bool fused) : GradSync(model, &comm) {
    const ParamLayout& layout = model_.layout();
    if (fused) {
      calls_.push_back({model_.grads(), static_cast<size_t>(layout.grad_buffer_count())});
      return;
    }
    for (const FlatTensor& t : layout.tensors()) {
      calls_.push_back({model_.grads() + t.offset, static_cast<size_t>(count_with_loss_slot(layout, t.index, t.count))});
    }
  }

  void on_grad_ready(const FlatTensor&) override {}

  SyncStats stats() const override {
    SyncStats s;
    s.calls_per_step = static_cast<int>(calls_.size());
    for (const Communicator::Range& c : calls_) {
      s.floats_per_step += static_cast<int64_t>(c.count);
      s.bytes_per_step += wire_bytes(c.data, static_cast<int64_t>(c.count));
    }
    return s;
  }

 private:
  void complete() override {
    comm_->allreduce_sum_batch(calls_);
    comm_->finish();
  }

  std::vector<Communicator::Range> calls_;  // in backward's order: each tensor, or the whole buffer
};

}  // namespace

std::unique_ptr<GradSync> make_naive_sync(Model& model, Communicator& comm, bool fused) {
  return std::make_unique<NaiveSync>(model, comm, fused);
}

}  // namespace dpscale
