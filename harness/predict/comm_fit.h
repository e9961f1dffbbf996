// comm_fit.h — `dpscale predict --fit-comm MODEL:K=SECONDS,...`: the link's α and β and the
// per-call overhead o (machine_terms.h) fitted to measured comm times of naive data parallelism,
// such as the workshop's table gives for K = 2 and 4 (its "Comm Time" column: seconds per epoch of
// the blocking phase, every tensor's all-reduce).
//
// Naive makes, per step, one all-reduce per tensor (calls c, bytes n_j; the step model's own
// launches, loss slot included) after backward; over `steps` steps the ring takes
//     t = steps · [ c·2(K−1)·α  +  c·o  +  2(K−1)/K · Σn_j · (1/β) ]      (star: 2(K−1)·Σn_j)
// linear in (α, o, 1/β). They are fitted by least squares on the relative residual (t_model −
// t)/t, none below zero (every subset of the three is tried and the best non-negative one kept).
// α and o are told apart only by samples at two or more K: at one K the fit keeps α = 0.
#pragma once

#include <string>
#include <vector>

#include "comm_time.h"
#include "step_model.h"

namespace dpscale::predict {

struct CommSample {
  std::string model;
  int world_size = 2;
  double comm_epoch_s = 0;
};

// "small:2=0.0284,small:4=0.0307": OptionError(flag, ...) naming the bad piece; `flag` is the
// option that gave the text (--fit-comm, or --fit-step, whose epochs take the same form).
std::vector<CommSample> parse_fit_comm(const std::string& text, const std::string& flag = "--fit-comm");

struct CommFit {
  double alpha_us = 0, gbps = 0, call_overhead_s = 0;
  int points = 0;
  double rms_rel_residual = 0;
};

// `singles` name the models' layers; `algo` ring, native or star. InputError for a model with no
// single-device run or an algorithm the formula does not cover.
CommFit fit_comm(const std::vector<CommSample>& samples, const std::vector<SingleRun>& singles, const Workload& w,
                 AllreduceAlgo algo);

}  // namespace dpscale::predict
