// harness_util.h — shared helpers of the harness tests: scratch directories, files, running the
// real `dpscale` binary, and hand-made records and sweep lines with chosen numbers.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "harness/sweep/config.h"
#include "harness/common/subprocess.h"
#include "harness/results/sweep_line.h"
#include "contract/record.h"

namespace dpscale::test {

inline const std::string kDpscale = std::string(DPSCALE_BIN_DIR) + "/dpscale";
inline const std::string kSource = DPSCALE_SOURCE_DIR;

// A fresh directory under the system temp dir, removed when the object dies.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpscale-harness-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline void write_file(const std::string& path, const std::string& text, bool executable = false) {
  std::ofstream(path, std::ios::binary) << text;
  if (executable) std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) v.push_back(l);
  }
  return v;
}

inline ProcessResult dpscale(std::vector<std::string> args, double timeout_s = 60) {
  args.insert(args.begin(), kDpscale);
  ProcessOptions o;
  o.timeout_s = timeout_s;
  return run_process(args, o);
}

// A complete, valid record for a point; `epoch_s` and `comm_s` set the timing, the rest follow
// (throughput = samples / epoch, compute = epoch - comm).
inline RunRecord make_record(const SweepRun& run, double epoch_s, std::optional<double> comm_s = std::nullopt,
                             int64_t n_params = 1462538) {
  const Point& p = run.point;
  RunRecord r;
  r.mode = p.mode.name();
  r.backend = "cpu";
  r.device_name = "test";
  r.model = p.model;
  r.widths = {784, 10};
  r.n_params = n_params;
  r.world_size = p.world_size;
  r.global_batch = 1024;
  r.local_batch = 1024 / p.world_size;
  r.dataset = "synthetic";
  r.n_samples = 32768;
  r.epochs = 1;
  r.steps_per_epoch = 32;
  r.steps = 32;
  r.lr = 0.01;
  r.epoch_times_s = {epoch_s};
  r.avg_epoch_s = epoch_s;
  r.throughput_samples_per_s = 32768.0 / epoch_s;
  r.losses = r.loss_global = r.loss_rank0 = {2.3};
  if (p.mode->data_parallel) {
    r.comm = "mpi";
    r.allreduce = "native";
    r.link = p.link();
    if (p.mode == Mode::naive) r.comm_s = comm_s;
    else r.exposed_comm_s = comm_s;
    r.comm_busy_s = comm_s;
  }
  r.compute_s = epoch_s - comm_s.value_or(0.0);
  if (p.mode == Mode::bucketed) {
    r.bucket_cap_mb = p.bucket_cap_mb();
    r.first_bucket_mb = 1.0;
    r.n_buckets = 2;
  }
  r.per_rank_epoch_s.assign(static_cast<size_t>(p.world_size), epoch_s);
  r.version = "test";
  r.timestamp = "2025-01-01T00:00:00Z";
  return r;
}

// The command line of a run of `p`, as a sweep line's run.argv holds it: the trainer by its name,
// then the flags that give it the point's settings.
inline std::vector<std::string> argv_of(const SweepRun& p) {
  std::vector<std::string> argv = {p.point.mode->executable, "--model", p.point.model};
  for (const std::string& a : p.point.flags()) argv.push_back(a);
  return argv;
}

// One sweep line (ok when `record` is set) as the sweep writes it: the run's settings in its argv.
inline std::string sweep_line(const SweepRun& p, const std::optional<RunRecord>& record,
                              const std::string& reason = "", const std::string& config = "test") {
  RunInfo info;
  info.config = config;
  info.run_id = p.run_id(config);
  info.argv = argv_of(p);
  info.host = "testhost";
  nlohmann::ordered_json system = {{"host", "testhost"}};
  return make_sweep_line(p.point, p.repeat, info, system, record, reason).dump() + "\n";
}

// A run of the point (model, mode, K, cap, link): the cap and the link given as the sweep gives
// them, as flags (the single run has no link).
inline SweepRun pt(const std::string& model, const std::string& mode, int k,
                   std::optional<double> cap = std::nullopt, const std::string& link = "none", int repeat = 0) {
  SweepRun run;
  run.args = {"--model", model};
  if (cap) run.args.insert(run.args.end(), {"--bucket-cap-mb", format_number(*cap)});
  if (mode != "single" && link != "none") run.args.insert(run.args.end(), {"--link", link});
  run.point = Point::of_args(model, ModeRef::named(mode), k, run.args);
  run.repeat = repeat;
  return run;
}

// A git repository at `dir` (made) with `commits` commits, each an edit of notes.txt, oldest
// first; returns their ids. For `dpscale bisect`'s checks, which need real commits.
inline std::vector<std::string> make_git_repo(const std::string& dir, int commits) {
  std::filesystem::create_directories(dir);
  ProcessOptions o;
  o.timeout_s = 30;
  o.env = {"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
           "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1"};
  run_process({"git", "-C", dir, "init", "--quiet"}, o);
  std::vector<std::string> ids;
  for (int i = 0; i < commits; ++i) {
    write_file(dir + "/notes.txt", "edit " + std::to_string(i) + "\n");
    run_process({"git", "-C", dir, "add", "notes.txt"}, o);
    run_process({"git", "-C", dir, "commit", "--quiet", "-m", "edit " + std::to_string(i)}, o);
    std::string id = run_process({"git", "-C", dir, "rev-parse", "HEAD"}, o).out;
    while (!id.empty() && id.back() == '\n') id.pop_back();
    ids.push_back(id);
  }
  return ids;
}

}  // namespace dpscale::test
