// dp_support.cpp — see dp_support.h.
#include "dp_support.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

#include "models/cpu/cpu_device.h"
#include "models/gpt/gpt.h"
#include "models/mlp_spec.h"
#include "models/model_spec.h"
#include "models/param_layout.h"
#include "models/io/safetensors.h"
#include "contract/record.h"

namespace dpscale::test {

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace

std::string bin(const std::string& exe) { return env_or("DPSCALE_BIN_DIR", DPSCALE_BIN_DIR) + "/" + exe; }

std::string mpiexec() { return env_or("DPSCALE_MPIEXEC", DPSCALE_MPIEXEC); }

std::vector<std::string> mpirun_argv(int np, const std::string& exe, const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--backend") == args.end()) {
    throw std::invalid_argument("mpirun_argv(" + exe + "): the test names no --backend (cpu for MPI, cuda for NCCL)");
  }
  std::vector<std::string> argv = {mpiexec(), "--allow-run-as-root", "--oversubscribe", "-np",
                                   std::to_string(np), bin(exe)};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

ProcessResult run(const std::vector<std::string>& argv, double timeout_s) {
  ProcessOptions opts;
  opts.timeout_s = timeout_s;
  // No guard process between the test and mpirun: the tests find mpirun as their own child and
  // its ranks as mpirun's (subprocess.h); the test's own teardown ends what it started.
  opts.die_with_parent = false;
  return run_process(argv, opts);
}

std::string describe(const std::vector<std::string>& argv, const ProcessResult& r) {
  std::ostringstream s;
  s << "command: " << quote_argv(argv) << "\nexit " << r.exit_code << ", signal " << r.term_signal
    << (r.timed_out ? ", TIMED OUT" : "") << ", " << r.seconds << " s\n--- stdout ---\n"
    << r.out << "--- stderr ---\n"
    << r.err;
  return s.str();
}

nlohmann::json record_of(const std::vector<std::string>& argv, double timeout_s) {
  const ProcessResult r = run(argv, timeout_s);
  if (r.timed_out || r.exit_code != 0 || r.term_signal != 0 || !find_results_json(r.out)) {
    throw std::runtime_error("the run did not finish with a record:\n" + describe(argv, r));
  }
  return *find_results_json(r.out);
}

int count_results_lines(const std::string& out) {
  int n = 0;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RESULTS_JSON:", 0) == 0) ++n;
  }
  return n;
}

nlohmann::json results_json(const std::string& out) {
  auto j = find_results_json(out);
  if (!j) throw std::runtime_error("no RESULTS_JSON line in:\n" + out);
  return *j;
}

int count_occurrences(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + needle.size())) ++n;
  return n;
}

ScratchDir::ScratchDir(const std::string& tag) {
  static int counter = 0;
  path_ = std::filesystem::temp_directory_path() /
          ("dpscale-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_random_checkpoint(const std::string& path, const std::string& model, unsigned seed) {
  if (is_gpt_model(model)) {
    // A transformer: GPT-2's own initialisation from `seed` (gpt.h), written as --save would.
    const ModelSpec ms = parse_model_spec(model, 0);
    CpuDevice dev(1);
    Gpt m(dev, *ms.gpt, 1);
    m.init_params(seed);
    save_checkpoint(path, m.layout(), m.params_to_host(), ms.checkpoint_metadata());
    return;
  }
  const MlpSpec spec = parse_model(model);
  const ParamLayout layout(spec);
  std::vector<float> params(static_cast<size_t>(layout.param_buffer_count()), 0.0f);
  std::mt19937 gen(seed);
  for (const FlatTensor& t : layout.tensors()) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(spec.widths[static_cast<size_t>(t.layer)]));
    std::uniform_real_distribution<float> u(-bound, bound);
    for (int64_t i = 0; i < t.count; ++i) params[static_cast<size_t>(t.offset + i)] = u(gen);
  }
  save_checkpoint(path, spec, layout, params);
}

Weights read_weights(const std::string& path) {
  const StFile f = read_safetensors(path);
  Weights w;
  for (const auto& [name, t] : f.tensors) {
    if (t.dtype != "F32") throw std::runtime_error(path + ": tensor " + name + " is " + t.dtype + ", not F32");
    std::vector<float> v(t.bytes.size() / sizeof(float));
    std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(float));
    w[name] = std::move(v);
  }
  return w;
}

LinkPreset link_preset(const std::string& name) {
  // The link presets: nvlink 300 GB/s and 1 µs per hop, pcie4 25 GB/s and 10 µs, ib100 12.5 GB/s and
  // 5 µs, eth10 1.25 GB/s and 50 µs.
  if (name == "nvlink") return {1.0, 300.0};
  if (name == "pcie4") return {10.0, 25.0};
  if (name == "ib100") return {5.0, 12.5};
  if (name == "eth10") return {50.0, 1.25};
  throw std::invalid_argument("no such link preset: " + name);
}

double ring_model_seconds(const LinkPreset& link, double nbytes, int k, double dilation) {
  if (k <= 1) return 0.0;
  return 2.0 * (k - 1) * (link.alpha_us * 1e-6 + (nbytes / k) / (link.gbps * 1e9)) * dilation;
}

std::vector<std::string> our_lines(const std::string& err, const std::string& exe) {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(exe + ":", 0) == 0 || line.rfind(exe + " (rank", 0) == 0) lines.push_back(line);
  }
  return lines;
}

}  // namespace dpscale::test
