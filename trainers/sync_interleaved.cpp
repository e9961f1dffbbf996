// sync_interleaved.cpp — interleaved data-parallel (the workshop's InterleavedDP hooks): an
// asynchronous all-reduce of each tensor is launched the moment backward writes it — weight
// and bias of a layer are two tensors — and finish() waits for all of them. While the comm
// thread (or stream) reduces layer L's gradients, backward computes layer L-1's.
#include "sync_strategies.h"

namespace dpscale {

namespace {

class InterleavedSync final : public GradSync {
 public:
  InterleavedSync(Model& model, Communicator& comm) : GradSync(model, &comm) {}

  void on_grad_ready(const FlatTensor& t) override {
    // The Work handles are not kept: complete() waits for the whole FIFO at once.
    comm_->allreduce_sum(model_.grads() + t.offset,
                         static_cast<size_t>(count_with_loss_slot(model_.layout(), t.index, t.count)));
  }

  SyncStats stats() const override {
    SyncStats s;
    s.calls_per_step = static_cast<int>(model_.layout().tensors().size());
    for (const FlatTensor& t : model_.layout().tensors()) {  // the tensors and the slot, no padding
      const int64_t n = count_with_loss_slot(model_.layout(), t.index, t.count);
      s.floats_per_step += n;
      s.bytes_per_step += wire_bytes(model_.grads() + t.offset, n);
    }
    return s;
  }

 private:
  void complete() override { comm_->finish(); }
};

}  // namespace

std::unique_ptr<GradSync> make_interleaved_sync(Model& model, Communicator& comm) {
  return std::make_unique<InterleavedSync>(model, comm);
}

}  // namespace dpscale
