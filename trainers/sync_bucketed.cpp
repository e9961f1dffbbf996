// sync_bucketed.cpp — DDP-style buckets: backward marks each tensor ready; when the last
// tensor of a bucket is written, one asynchronous all-reduce of that bucket's contiguous slice
// of the flat gradient buffer is launched, in place (no copy in or out). finish() waits for all.
#include "buckets.h"
#include "sync_strategies.h"

namespace dpscale {

namespace {

class BucketedSync final : public GradSync {
 public:
  BucketedSync(Model& model, Communicator& comm, double cap_mb, double first_mb, BucketRule rule)
      : GradSync(model, &comm), cap_mb_(cap_mb), first_mb_(first_mb),
        buckets_(assign_buckets(model.layout(), cap_mb, first_mb, rule)), bucket_of_(model.layout().tensors().size()),
        pending_(buckets_.size()) {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      for (int t = buckets_[b].first_tensor; t <= buckets_[b].last_tensor; ++t) bucket_of_[static_cast<size_t>(t)] = b;
    }
  }

  void begin_step() override {
    for (size_t b = 0; b < buckets_.size(); ++b) pending_[b] = buckets_[b].n_tensors();
  }

  void on_grad_ready(const FlatTensor& t) override {
    const size_t b = bucket_of_[static_cast<size_t>(t.index)];
    if (--pending_[b] > 0) return;
    const Bucket& bk = buckets_[b];
    // The bucket's slice, with the layout's zero padding between its tensors: one call needs
    // one contiguous range, and copying the tensors out and back (PyTorch's flat bucket) would
    // cost two passes to save under 256 bytes a tensor.
    comm_->allreduce_sum(model_.grads() + bk.offset,
                         static_cast<size_t>(count_with_loss_slot(model_.layout(), bk.last_tensor, bk.count)));
  }

  SyncStats stats() const override {
    SyncStats s;
    s.calls_per_step = static_cast<int>(buckets_.size());
    s.n_buckets = static_cast<int>(buckets_.size());
    for (const Bucket& b : buckets_) {
      const int64_t n = count_with_loss_slot(model_.layout(), b.last_tensor, b.count);  // the last carries the slot
      s.bucket_bytes.push_back(wire_bytes(model_.grads() + b.offset, b.count));
      s.floats_per_step += n;
      s.bytes_per_step += wire_bytes(model_.grads() + b.offset, n);
    }
    s.bucket_cap_mb = cap_mb_;
    s.first_bucket_mb = first_mb_;
    return s;
  }

 private:
  void complete() override { comm_->finish(); }

  double cap_mb_, first_mb_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;  // tensor index -> bucket
  std::vector<int> pending_;       // tensors not yet written, per bucket, this step
};

}  // namespace

std::unique_ptr<GradSync> make_bucketed_sync(Model& model, Communicator& comm, double bucket_cap_mb,
                                             double first_bucket_mb, BucketRule rule) {
  return std::make_unique<BucketedSync>(model, comm, bucket_cap_mb, first_bucket_mb, rule);
}

}  // namespace dpscale
