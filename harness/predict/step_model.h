// step_model.h — the predicted epoch of one (model, mode, K): the measured single-device epoch
// scaled to the wanted samples, batch and K, and one simulated step (step_sim.h) times the steps.
//
//   steps   = ⌊samples / B⌋                              as the trainers
//   t_c(K)  = (T1 / steps1) / (B1 · S1) · (B · S) · r / K  T1: measured single-device epoch at
//                                                        samples1, batch B1 (steps1 steps)
//   epoch   = steps · step(t_c(K))                       step from the FIFO simulation
// Compute is per token: S1 and S are the measured run's and the predicted runs' tokens per sample
// (1 for the MLP), and r the ratio of the step's GEMM FLOPs per token at S to those at S1
// (step_flops_per_sample: attention's share grows with S; r = 1 at the measured S).
// With --accum-steps A, steps = ⌊samples / (A·B)⌋ and each is (A−1)·t_c plus one simulated step
// (only the last micro-batch communicates); with 2-byte gradients every all-reduce carries half
// the bytes (the conversions' cost is left out).
// With machine terms (machine_terms.h; all zero unless calibrated):
//   t_c0    = ((t1 − φ)/K + φ) · O                       before any communication (t1 = t_c(1))
//   d(n)    = α-β(n) + o                                 every all-reduce call
//   t_c     = t_c0 + o · (calls launched before backward ends)
//                  + σ · O · Σ ring_moved(n_j)           over the all-reduces that start on the
//                                                        channel before backward ends (a fixed
//                                                        point: a longer backward lets more start)
// Assumed beyond the terms: ranks are identical (no stragglers); communication is not slowed by
// compute (the link emulation holds each all-reduce for its modelled time, which dominates).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "comm_time.h"
#include "machine_terms.h"
#include "models/model_spec.h"
#include "step_sim.h"

namespace dpscale::predict {

// A model's measured single-device epoch.
struct SingleRun {
  ModelSpec spec;           // with the run's own tokens per sample (its seq_len) for a transformer
  double epoch_s = 0;       // T1
  int64_t samples = 32768;  // its --samples
  int batch = 1024;         // its --batch-size
};

struct Workload {
  int64_t samples = 32768;
  int batch = 1024;
  int seq_len = 0;          // a transformer's tokens per sample; 0: the single run's own
};

// The model as the workload runs it: a transformer at the workload's seq_len (when it sets one).
ModelSpec spec_at(const SingleRun& single, const Workload& w);

struct EpochPrediction {
  double epoch_s = 0;
  double compute_s = 0;      // per epoch
  double naive_comm_s = 0;   // per epoch: naive's blocking phase (Σ per-tensor all-reduces)
  double busy_s = 0;         // per epoch: this mode's summed all-reduce time
  double exposed_s = 0;      // per epoch: this mode's comm past backward (naive: all of it)
  int calls_per_step = 0;
  int64_t steps = 0;
};

// Compute per step at K = 1 for this workload's batch.
double step_compute_1(const SingleRun& single, const Workload& w);

// `ranks_per_node` 0: all K ranks on one node (what oversubscription counts).
EpochPrediction predict_epoch(const SingleRun& single, const Workload& w, const SyncSetup& sync, const CommModel& comm,
                              int k, const MachineTerms& terms = {}, int ranks_per_node = 0);

// One simulated step with the machine terms applied (the fixed point above).
StepTimes simulate_with_terms(const ModelSpec& spec, const SyncSetup& sync, const CommModel& comm, int k,
                              double t_compute0, const MachineTerms& terms, double oversub);

}  // namespace dpscale::predict
