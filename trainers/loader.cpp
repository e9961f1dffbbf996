// loader.cpp — the emulated input pipeline: fetch (delay + copy) and the prefetching workers.
#include "loader.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace dpscale {

using Clock = std::chrono::steady_clock;

BatchLoader::HostBlock::HostBlock(UploadLane* lane, size_t nbytes)
    : lane_(lane), p_(lane ? lane->alloc_host(nbytes) : ::operator new(nbytes)), n_(nbytes) {}

BatchLoader::HostBlock::~HostBlock() {
  if (lane_) lane_->free_host(p_);
  else ::operator delete(p_);
}

BatchLoader::BatchLoader(const LoaderSource& src, double delay_ms, int prefetch, UploadLane* lane)
    : src_(src), delay_ms_(delay_ms), prefetch_(prefetch), slots_(static_cast<size_t>(prefetch) + 1) {
  for (Slot& s : slots_) {
    s.x = std::make_unique<HostBlock>(lane, static_cast<size_t>(src.local_batch * src.in_width) * sizeof(float));
    s.y = std::make_unique<HostBlock>(lane, static_cast<size_t>(src.local_batch * src.y_width) * sizeof(int32_t));
  }
  for (int w = 0; w < prefetch_; ++w) workers_.emplace_back([this, w] { worker(w); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void BatchLoader::fetch_into(Slot& slot, int64_t seq) {
  if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms_));
  const int64_t b = seq % src_.steps_per_epoch;
  const int64_t row0 = b * src_.global_batch + src_.rank * src_.local_batch;
  std::memcpy(slot.x->data(), src_.x + row0 * src_.in_width, slot.x->nbytes());
  std::memcpy(slot.y->data(), src_.y + row0 * src_.y_width, slot.y->nbytes());
}

// Worker w fetches sequence numbers w, w + N, w + 2N, ... Sequence i goes to slot i mod (N+1),
// which is free once the consumer has moved past i − (N+1), i.e. has asked for i − N: while the
// step trains on batch j (asked_ = j + 1), batches j+1 .. j+N may be in flight.
void BatchLoader::worker(int w) {
  const auto n_slots = static_cast<int64_t>(slots_.size());
  for (int64_t seq = w;; seq += prefetch_) {
    Slot& slot = slots_[static_cast<size_t>(seq % n_slots)];
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || asked_ > seq - prefetch_; });
      if (stop_) return;
    }
    fetch_into(slot, seq);
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot.ready_seq = seq;
    }
    cv_.notify_all();
  }
}

StagedBatch BatchLoader::next() {
  const auto t0 = Clock::now();
  const int64_t seq = asked_;
  Slot& slot = slots_[static_cast<size_t>(seq % static_cast<int64_t>(slots_.size()))];
  if (prefetch_ == 0) {
    fetch_into(slot, seq);
    ++asked_;
  } else {
    std::unique_lock<std::mutex> lock(mu_);
    ++asked_;  // the previous batch's step is over: its slot may be refilled
    cv_.notify_all();
    cv_.wait(lock, [&] { return slot.ready_seq == seq; });
  }
  wait_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
  return StagedBatch{static_cast<const float*>(slot.x->data()), static_cast<const int32_t*>(slot.y->data())};
}

double BatchLoader::take_wait_seconds() {
  const double s = wait_s_;
  wait_s_ = 0.0;
  return s;
}

}  // namespace dpscale
