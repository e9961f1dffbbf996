// sync_interleaved.cpp — interleaved data-parallel (the workshop's InterleavedDP hooks): an
// asynchronous all-reduce of each tensor is launched the moment backward writes it — weight
// and bias of a layer are two tensors — and finish() waits for all of them. While the comm
// thread (or stream) reduces layer L's gradients, backward computes layer L-1's.
#include <chrono>

#include "sync_strategies.h"

namespace dpscale {

namespace {

class InterleavedSync final : public GradSync {
 public:
  InterleavedSync(Mlp& model, Communicator& comm) : model_(model), comm_(comm) {}

  void on_grad_ready(const TensorView& t) override {
    // The Work handles are not kept: finish() waits for the whole FIFO at once.
    comm_.allreduce_sum(model_.grads() + t.offset,
                        static_cast<size_t>(sync_extent(model_.layout(), t.index, t.count)));
  }

  void finish() override {
    model_.device().synchronize();  // backward has drained; from here on we only wait
    const auto t0 = std::chrono::steady_clock::now();
    comm_.finish();
    wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  SyncStats stats() const override {
    SyncStats s;
    s.calls_per_step = static_cast<int>(model_.layout().tensors().size());
    s.bytes_per_step = model_.layout().grad_buffer_count() * static_cast<int64_t>(sizeof(float));
    return s;
  }

 private:
  Mlp& model_;
  Communicator& comm_;
};

}  // namespace

std::unique_ptr<GradSync> make_interleaved_sync(Mlp& model, Communicator& comm) {
  return std::make_unique<InterleavedSync>(model, comm);
}

}  // namespace dpscale
