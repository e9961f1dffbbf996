// machine_fit.h — `dpscale predict --calibrate RUN.jsonl`: the machine terms (machine_terms.h)
// fitted from one measured sweep file: its single-device runs (T1 per model) and its
// data-parallel runs at one K (the smallest K > 1 it holds), of the modes `--fit-modes` names
// (default: every data-parallel mode in the file at that K).
//
// Each run r at K, with its own link, dilation and setup, gives t_c = T1/K (its workload), O =
// oversubscription(K / n_nodes) and its modelled all-reduce times; per step:
//   φ  from naive runs:        φ_r = (compute/O − t1/K) / (1 − 1/K), then φ0 + φ1·P by least
//                              squares over the runs' models (φ1 only with two or more sizes)
//   o  from naive runs:        (comm busy − Σ modelled d(n)) / calls        (no naive run: from the
//                                                                         overlapped runs' busy)
//   σ  from overlapped runs:   (compute − t_c0 − o·launches inside backward) / (O · MiB moved by
//                              all-reduces that started before the measured backward ended)
// σ and o are the median over their runs, floored at 0 (a term that would speed a run up is noise).
// A term without runs to fit it is 0 and says so. The cores are the file's machine's CPUs on the
// CPU backend, 0 (not modelled) on the CUDA backend.
//
// A run the machine disturbed (its sweep line's system.state.disturbed, the busy signal the
// regression gate uses) is left out of the fit and listed. Refused (InputError, one line): a file
// without a single-device run, a data-parallel model with no single-device run of its own, a
// failed run among the fit runs or their singles, nothing left to fit once the disturbed runs are
// out (naming the first and why), lines of more than one machine.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "contract/modes.h"
#include "harness/results/results_file.h"
#include "harness/results/sweep_line.h"
#include "machine_terms.h"
#include "step_model.h"

namespace dpscale::predict {

struct TermFit {
  std::string name, unit;  // "σ contention", "ms per MiB"
  double value = 0;        // in `unit`
  int runs = 0;            // how many runs it was fitted from (0: not fitted, assumed 0)
  std::string from;        // "3 naive runs", or why it was not fitted
};

struct Calibration {
  std::string path;
  std::vector<SingleRun> singles;  // per model, for the tables (--calibrate with --modes, ...)
  std::map<Point, SingleRun> single_at;  // per single run's point: what a run pairs with (singles_by_point)
  MachineTerms terms;
  std::vector<TermFit> fits;        // φ, σ, o, cores: what was fitted, how, in which units
  int fit_k = 0;
  std::vector<Point> fitted;     // the points whose runs were fitted (never validated)
  std::vector<std::string> left_out;  // runs the machine disturbed: "id (disturbed: why)"
  MachineFingerprint machine;
};

// One naive run's compute per step (oversubscription divided out) against its single's.
struct FixedStepSample {
  double params = 0;
  int world_size = 2;
  double t1_step = 0, compute_step = 0;
};
// The fixed step φ one sample implies: the compute per step that did not shrink with K,
// (compute_step − t1_step/K) / (1 − 1/K). Below 0 when the compute shrank faster than 1/K.
double fixed_step_of(const FixedStepSample& x);
// φ0 and φ1 (machine_terms.h) from naive runs; neither below 0.
void fit_fixed_step(const std::vector<FixedStepSample>& samples, MachineTerms& terms);

// `fit_modes` empty: every data-parallel mode the file holds at the fit K.
Calibration calibrate(const std::string& path, const std::vector<Mode>& fit_modes = {});

// The prediction of one recorded run on its own setup (link, dilation, algorithm, caps, fused,
// samples, batch, K, nodes) from `single`, with `terms`.
EpochPrediction predict_recorded(const SingleRun& single, const RunRecord& r, const MachineTerms& terms);

// A results file whose runs are predicted and checked against the measurement (validate, the
// cap check): its runs, the single-device runs the predictions start from (single_for) and and the machine terms (the calibration's, else none).
// Refused (InputError): a file of shared-GPU runs, a line measured on another machine than the
// calibration's (the message ends with `hint`).
struct RunsToCheck {
  ResultsFile file;
  std::map<Point, SingleRun> singles;  // by the single run's point: the calibration's, else the file's own
  // The calibration's single run of each model (its epoch at its own workload), for a run of
  // another sweep whose single point the calibration did not measure: the terms describe the
  // machine, and the step model scales a model's compute to the run's samples and batch.
  std::map<std::string, SingleRun> calibrated_models;
  MachineTerms terms;

  // The single run a data-parallel point starts from: the single run of its own point
  // (beside(single, 1)), as the gate pairs; else, calibrated, the calibration's run of its
  // model. nullptr: none.
  const SingleRun* single_for(const Point& p) const;
};
RunsToCheck runs_to_check(const std::string& path, const std::optional<Calibration>& calibration,
                          const std::string& hint = "");

// Markdown lines "- σ contention: 1.2 ms per MiB moved during backward (3 overlapped runs)" for the top of a table.
std::string describe_fits(const Calibration& c);

}  // namespace dpscale::predict
