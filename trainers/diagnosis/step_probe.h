// step_probe.h — what one rank measures and injects inside each timed step.
//
//   batch(b)         the rows the step trains on: the dataset in place, or, with
//                    --loader-delay-ms / --prefetch, the loader's staged copy (its wait timed)
//   compute_begin()  before forward   ┐ the compute interval: forward + loss + backward, until
//   compute_end()    after backward   ┘ the last gradient is ready (the device's IntervalTimer:
//                                       host clock on the CPU, events on a GPU, no host sync)
//   backward_begin() between loss and backward (the trace's forward span ends)
//   sync_done()      after GradSync::finish(): the trace's wait span
//   step_drained()   after GradSync::drain(): the step's all-reduce timings (the communicator's
//                    call log: MPI's comm thread, NCCL's events; on a GPU without --trace one
//                    step in eight: call_log_sampling.h) feed the per-unit bandwidth and the trace
//   on_grad_ready    stands between backward and the GradSync: on the --inject-delay rank
//                    (cause compute) it sleeps its share of MS before each gradient is announced
//                    (a straggler, found before the collective equalises wall time), and tells
//                    the trace
// Per step it also keeps this rank's compute (host backends: wall and the thread's CPU time),
// loader wait and link time, whose medians over the timed steps find a straggler and its cause
// (trainers/diagnosis/straggler.h): a median ignores the few steps a busy machine took from one rank.
// And, once per step (in step_drained), what the rank's threads lost to contention: their run
// delay and involuntary switches (contention.h), per step for the record and the trace, summed
// per epoch for the record and the disturbance rule; and the compute thread's own run delay
// inside the compute interval (two reads of one file), for the straggler rule's `contended`.
//
// The probe exists only for the timed epochs; warm-up runs without it. With every diagnosis
// option off it adds two timer marks and the contention reads (of /proc: under 10 µs) per step
// and nothing else: the same rows, the same all-reduces in the same order, the same weights.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "contract/diagnosis_options.h"
#include "trainers/grad_sync.h"
#include "trainers/diagnosis/contention.h"
#include "trainers/loader.h"
#include "models/interval_timer.h"
#include "trainers/rank_setup.h"
#include "trainers/step_observer.h"

namespace dpscale {

class Tracer;

// This rank's totals over the timed epochs. Trivially copyable: rank 0 gathers them.
struct RankTiming {
  double compute_s = 0.0;
  double loader_s = 0.0;
  // Per-step medians: compute (on the CPU backend with one BLAS thread the compute thread's
  // CPU time; a GPU's mean, whose per-step times would need a host sync), loader wait, link
  // time (CallTiming::link_s summed over the step's all-reduces).
  double compute_med_s = 0.0, loader_med_s = 0.0, link_med_s = 0.0;
  // Per-step median of the run delay of the rank's threads (contention.h); 0 where unread.
  double run_delay_med_s = 0.0;
  bool contention_read = false;  // /proc gave schedstat
  // Per-step median of the compute thread's own run delay inside the compute interval, and
  // whether compute_med_s is CPU time (which holds none of that waiting) rather than a clock's
  // interval (which holds all of it).
  double compute_delay_med_s = 0.0;
  bool compute_is_cpu_time = false;
};

class StepProbe final : public StepObserver {
 public:
  // `tracer` may be null (no --trace).
  StepProbe(RankSetup& s, GradSync& sync, Communicator* comm, Tracer* tracer);
  ~StepProbe() override;

  // As the ranks leave the barrier before the first timed step: the trace's t = 0.
  void start() override;
  Batch batch(int64_t batch_index) override;
  void compute_begin() override;
  void backward_begin() override;
  void compute_end() override;
  void sync_done() override;
  // After GradSync::drain(): the step's all-reduces are done and their call log complete (NCCL
  // reads its events only then), for the per-unit bandwidth and the trace's comm spans.
  void step_drained() override;
  void optimizer_begin() override;
  void optimizer_end() override;
  void on_grad_ready(const FlatTensor& t) override;

  // Totals since construction (waits for the device's timer events).
  RankTiming totals();
  // What the rank's threads lost since the last call (or start()): the steps' reads and one
  // more for the epoch's tail. Refreshes the thread list. Call once per epoch.
  Contention take_epoch_contention();
  EpochWait take_epoch_wait() override {
    const Contention c = take_epoch_contention();
    return {c.run_delay_s, c.involuntary_switches};
  }
  bool contention_available() const { return contention_.available(); }

  // Per all-reduce of a step, in launch order: its bytes and its median duration (s) over the
  // timed steps that kept the call log (this rank's comm thread or comm stream). Empty in a world of one with no
  // communicator.
  std::vector<int64_t> unit_bytes() const;
  std::vector<double> unit_median_s() const;

 private:
  RankSetup& s_;
  GradSync& sync_;
  Communicator* comm_;
  Tracer* tracer_;
  InjectDelay delay_;
  bool delay_here_ = false;  // this rank's backward is slowed
  double build_slowdown_pct_ = 0.0;  // > 0: this build's trainers are slower on purpose (build_slowdown.h)
  std::chrono::steady_clock::time_point step_begin_{};  // this step's first forward
  double owed_s_ = 0.0;      // of the step's injected compute delay, not slept yet
  double loader_step_s_ = 0.0;  // this step's loader wait so far
  std::vector<double> step_compute_, step_loader_, step_link_;
  // The injected delay now: MS, or PCT% of the median of the last steps' times (cycles_).
  double delay_s() const;
  // The median of the last few step times (sync to sync), 0 before the first one.
  double recent_step_s() const;
  std::vector<double> cycles_;
  std::chrono::steady_clock::time_point last_sync_{};
  size_t link_floats_ = 0;          // > 0: this rank's link is the slow one
  double compute_sum_s_ = 0.0;      // the per-step takes of the host clock, summed
  bool cpu_clock_ = false;          // compute timed in this thread's CPU time too
  double cpu_begin_s_ = 0.0;
  std::vector<double> step_cpu_;
  ContentionReader contention_;
  Contention epoch_contention_;     // this epoch's steps so far
  std::vector<double> step_run_delay_;
  ThreadRunDelay compute_thread_;   // the thread the probe was made on: the one that computes
  double compute_delay_begin_s_ = 0.0;
  std::vector<double> step_compute_delay_;
  double injected_loader_s_ = 0.0;  // the injected loader waits, summed
  bool first_grad_ = true;
  std::unique_ptr<UploadLane> lane_;  // a GPU's uploads of the staged batches (before loader_:
                                      // the loader's pinned slots are the lane's)
  std::unique_ptr<BatchLoader> loader_;
  DeviceBuffer<float> x_dev_;  // a GPU's copy of the staged batch
  DeviceBuffer<int32_t> y_dev_;
  std::unique_ptr<IntervalTimer> compute_timer_;
  int64_t step_ = 0;  // timed steps begun, 1-based once begun
  bool log_every_step_ = true;  // the call log kept on every step (call_log_sampling.h)
  int64_t compute_steps_ = 0;   // compute_begin() calls: the steps whose log was decided
  bool logged_ = true;          // this step keeps the call log
  std::vector<int64_t> unit_bytes_;
  std::vector<std::vector<double>> unit_durations_;
};

}  // namespace dpscale
