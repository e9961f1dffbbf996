// loader.h — the input pipeline of --loader-delay-ms and --prefetch: a starved loader
// to diagnose, and prefetching to hide it.
//
// Each batch's fetch takes `delay_ms` (the emulated cost of reading and decoding it: a sleep, as
// a slow disk or an overworked decode thread costs the step wall time, not CPU) and then copies
// this rank's rows of that batch out of the dataset into a staging slot, which the step trains
// on. With prefetch N, N background threads fetch the next N batches while the current step
// runs (PyTorch's DataLoader with N workers, one batch each in flight); with prefetch 0 the step
// fetches its own batch. The consumer's blocked time is the loader's time in the record.
//
// On a GPU the slots are pinned host memory from the device's UploadLane (models/upload_lane.h),
// so the step's upload of a staged batch runs on a copy stream with no host synchronisation;
// elsewhere they are ordinary host memory.
//
// Batches come in the training order: sequence number i is batch i mod steps_per_epoch, the
// order the timed epochs consume them (warm-up does not use the loader). The staging slots
// hold the same rows the dataset does, so a run with the loader trains exactly as one without.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "models/upload_lane.h"

namespace dpscale {

struct LoaderSource {
  const float* x = nullptr;    // host dataset, [n, in_width]
  const int32_t* y = nullptr;  // [n, y_width]
  int in_width = 0;
  int y_width = 1;             // labels per sample (a transformer's seq_len targets)
  int64_t global_batch = 0, local_batch = 0, rank = 0;
  int64_t steps_per_epoch = 1;  // global batches per epoch (optimizer steps × --accum-steps)
};

struct StagedBatch {
  const float* x;
  const int32_t* y;
};

class BatchLoader {
 public:
  // `lane` (may be null) allocates the slots' host memory; it must outlive the loader.
  BatchLoader(const LoaderSource& src, double delay_ms, int prefetch, UploadLane* lane = nullptr);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // The next batch in training order (host memory, valid until the next call). Blocks until it
  // has been fetched; adds the blocked time to the loader's seconds.
  StagedBatch next();
  double take_wait_seconds();
  double wait_seconds() const { return wait_s_; }  // since the last take

 private:
  // Host memory of one slot: the lane's (pinned) or the heap's.
  class HostBlock {
   public:
    HostBlock(UploadLane* lane, size_t nbytes);
    ~HostBlock();
    HostBlock(const HostBlock&) = delete;
    HostBlock& operator=(const HostBlock&) = delete;
    void* data() const { return p_; }
    size_t nbytes() const { return n_; }

   private:
    UploadLane* lane_;
    void* p_;
    size_t n_;
  };
  struct Slot {
    std::unique_ptr<HostBlock> x, y;
    int64_t ready_seq = -1;  // the sequence number whose rows the slot holds
  };
  void fetch_into(Slot& slot, int64_t seq);  // delay, then copy rows; no lock held
  void worker(int w);

  LoaderSource src_;
  double delay_ms_;
  int prefetch_;
  std::vector<Slot> slots_;  // prefetch + 1: the one in use and the N being fetched
  int64_t asked_ = 0;        // next() calls so far: the sequence number the next call returns
  double wait_s_ = 0.0;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace dpscale
