// dp_support.h — what the data-parallel trainer tests share: starting the real executables
// (train_single_gpu directly, train_dp_* through `mpirun -np K`), reading their one
// RESULTS_JSON line, writing and reading checkpoints, a scratch directory, and the α-β link
// model written out again by hand (so the tests do not trust contract/link_model.cpp to check
// itself).
//
// Every run has a timeout (run_process kills the process group); tests assert it did not fire,
// so a hang is a failure, never a stuck CI job.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/common/subprocess.h"

namespace dpscale::test {

// The tiny model the multi-rank tests train: 784 -> 64 -> 32 -> 10, 52 650 parameters, six
// tensors. Fast enough on two shared cores that K = 4 oversubscribed takes about a second.
inline const std::string kTinyModel = "784,64,32,10";

// Absolute path of a built executable (train_single_gpu, train_dp_naive, ...): in the build's
// bin/, or in $DPSCALE_BIN_DIR when set (the GPU kit runs these tests from its own bin/).
std::string bin(const std::string& exe);

// The mpirun the build was configured with, or $DPSCALE_MPIEXEC when set (the kit's own).
std::string mpiexec();

// Argument lists joined: `args + {"--seed", "43"}`.
inline std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// argv of `mpirun --allow-run-as-root --oversubscribe -np K <bin(exe)> args...`.
// `args` must name --backend: without it a trainer takes CUDA + NCCL wherever a GPU answers,
// and K ranks on one GPU is what NCCL refuses — a test that means the CPU (MPI) must say so.
// Throws std::invalid_argument (a test failure) when it does not.
std::vector<std::string> mpirun_argv(int np, const std::string& exe, const std::vector<std::string>& args);

// run_process with a timeout (seconds). Never hangs: the group is killed when the time is up.
ProcessResult run(const std::vector<std::string>& argv, double timeout_s = 120.0);

// Everything a test may want to print when a run did not go as expected.
std::string describe(const std::vector<std::string>& argv, const ProcessResult& r);

// Runs argv (a trainer, or mpirun and one) and returns its RESULTS_JSON record; throws
// std::runtime_error, with describe()'s text, unless it exited 0 in time and printed one.
nlohmann::json record_of(const std::vector<std::string>& argv, double timeout_s);

// Lines of `out` that start with "RESULTS_JSON:".
int count_results_lines(const std::string& out);
// The JSON of the one RESULTS_JSON line; throws std::runtime_error if there is none.
nlohmann::json results_json(const std::string& out);

// Occurrences of `needle` in `haystack` (non-overlapping).
int count_occurrences(const std::string& haystack, const std::string& needle);

// The lines of `err` our program wrote: they start with the executable's name ("train_dp_naive:"
// or "train_dp_naive (rank 1):"). mpirun's banner never does.
std::vector<std::string> our_lines(const std::string& err, const std::string& exe);

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Writes a checkpoint of `model` with weights uniform in ±1/sqrt(fan_in) from std::mt19937(seed)
// — deliberately NOT the trainers' own initialiser, so a run that ignored --init would show. A
// transformer (gpt-tiny, gpt:...) gets GPT-2's initialisation (gpt.h) from `seed`: give a seed
// other than the trainers' default 42, so that ignoring --init shows there too.
void write_random_checkpoint(const std::string& path, const std::string& model, unsigned seed);

// tensor name ("layers.0.weight", ...) -> values, from a safetensors checkpoint.
using Weights = std::map<std::string, std::vector<float>>;
Weights read_weights(const std::string& path);

// The link presets (α in µs per hop, β in GB/s), typed in again from the issue text.
struct LinkPreset {
  double alpha_us, gbps;
};
LinkPreset link_preset(const std::string& name);
// One ring all-reduce of `nbytes` over k ranks: 2(k-1)·(α + (B/k)/β)·F, in seconds.
double ring_model_seconds(const LinkPreset& link, double nbytes, int k, double dilation);

}  // namespace dpscale::test
