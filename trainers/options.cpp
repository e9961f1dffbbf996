// options.cpp — the CLI table (CLI11) and value checks.
#include "options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "models/errors.h"

namespace dpscale {

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::naive: return "naive";
    case Mode::interleaved: return "interleaved";
    case Mode::bucketed: return "bucketed";
    default: return "single";
  }
}

const char* executable_name(Mode m) {
  switch (m) {
    case Mode::naive: return "train_dp_naive";
    case Mode::interleaved: return "train_dp_interleaved";
    case Mode::bucketed: return "train_ddp_bucketed";
    default: return "train_single_gpu";
  }
}

namespace {
const char* description(Mode m) {
  switch (m) {
    case Mode::naive: return "Naive data-parallel: full backward, then a blocking all-reduce of every gradient tensor.";
    case Mode::interleaved: return "Interleaved data-parallel: an async all-reduce per tensor, fired the moment backward writes it.";
    case Mode::bucketed: return "DDP-style data-parallel: gradients grouped into capped buckets, each reduced async when complete.";
    default: return "Single-device baseline: forward, backward, SGD; no communication.";
  }
}
}  // namespace

bool parse_options(int argc, char** argv, Mode mode, TrainOptions& o) {
  o.mode = mode;
  CLI::App app{description(mode), executable_name(mode)};
  app.option_defaults()->always_capture_default();
  app.get_formatter()->column_width(34);
  std::string threads_text;
  app.add_option("--model", o.model, "small | medium | large | xlarge, or widths like 784,256,10");
  app.add_option("--data", o.data.kind, "synthetic | fashion-mnist | npy");
  app.add_option("--samples", o.data.samples, "training samples (0 = synthetic 32768 / all of a file)");
  app.add_option("--data-dir", o.data.data_dir, "directory of Fashion-MNIST's gzip IDX files");
  app.add_option("--features", o.data.features, "npy: float32 features [N, in_width]");
  app.add_option("--labels", o.data.labels, "npy: int32/int64 labels [N]");
  app.add_option("--batch-size", o.batch_size, "global batch; each of K ranks takes batch/K rows");
  app.add_option("--epochs", o.epochs, "passes over the data (an incomplete last batch is dropped)");
  app.add_option("--lr", o.lr, "SGD learning rate");
  app.add_option("--momentum", o.momentum, "SGD momentum (0 = plain SGD)");
  app.add_option("--weight-decay", o.weight_decay, "SGD weight decay");
  app.add_option("--warmup-steps", o.warmup_steps, "untimed forward+backward steps before training, no update");
  app.add_option("--max-steps", o.max_steps, "stop after this many optimizer steps (0 = no limit)");
  app.add_option("--seed", o.seed, "seed of the initial weights and of the synthetic data")
      // CLI11 would wrap "-1" into 2^64-1 for this unsigned option: refuse it instead.
      ->check([](const std::string& v) {
        return v.find('-') == std::string::npos ? std::string() : "must not be negative (got " + v + ")";
      });
  app.add_option("--backend", o.device.backend, "auto | cpu | cuda (auto: CUDA if a GPU answers)");
  app.add_option("--threads", o.device.threads, "BLAS threads per process (CPU backend)");
  app.add_flag("--tf32", o.device.tf32, "allow TF32 tensor-core GEMMs (CUDA backend)");
  app.add_option("--init", o.init_path, "load initial weights from a safetensors file");
  app.add_option("--save", o.save_path, "write final weights to a safetensors file");
  app.add_flag("--quiet", o.quiet, "no per-epoch progress on stderr");
  if (mode != Mode::single) {
    app.add_option("--link", o.link, "emulated link (MPI): none | nvlink | pcie4 | ib100 | eth10 | ALPHA_US:GBPS");
    app.add_option("--link-dilation", o.link_dilation, "multiply modelled link times by F, or auto:TFLOPS");
    app.add_option("--allreduce", o.allreduce, "MPI all-reduce algorithm: native | ring | star");
  }
  if (mode == Mode::naive) app.add_flag("--fused", o.fused, "one all-reduce of the whole gradient buffer");
  if (mode == Mode::bucketed) {
    app.add_option("--bucket-cap-mb", o.bucket_cap_mb, "bucket cap in MiB (PyTorch DDP's bucket_cap_mb)");
    app.add_option("--first-bucket-mb", o.first_bucket_mb, "cap of the first bucket in MiB");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    throw InputError(msg);
  }

  auto need = [](bool ok, const std::string& msg) {
    if (!ok) throw InputError(msg);
  };
  need(o.batch_size >= 1, "--batch-size must be at least 1 (got " + std::to_string(o.batch_size) + ")");
  need(o.epochs >= 1, "--epochs must be at least 1 (got " + std::to_string(o.epochs) + ")");
  need(std::isfinite(o.lr) && o.lr > 0, "--lr must be a positive number");
  need(std::isfinite(o.momentum) && o.momentum >= 0 && o.momentum < 1, "--momentum must be in [0, 1)");
  need(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "--weight-decay must not be negative");
  need(o.warmup_steps >= 0, "--warmup-steps must not be negative");
  need(o.max_steps >= 0, "--max-steps must not be negative");
  need(o.data.samples >= 0, "--samples must not be negative");
  o.data.seed = o.seed;  // --seed drives the synthetic data too, as its help says
  need(o.device.threads >= 1, "--threads must be at least 1");
  need(std::isfinite(o.bucket_cap_mb) && o.bucket_cap_mb > 0,
       "--bucket-cap-mb must be a positive number of MiB (got " + CLI::detail::to_string(o.bucket_cap_mb) + ")");
  need(std::isfinite(o.first_bucket_mb) && o.first_bucket_mb > 0,
       "--first-bucket-mb must be a positive number of MiB (got " + CLI::detail::to_string(o.first_bucket_mb) + ")");
  return true;
}

uint64_t options_fingerprint(const TrainOptions& o) {
  std::ostringstream s;
  // Full precision, so --lr 0.01 and --lr 0.0100001 differ (the default 6 digits made them equal).
  s << std::setprecision(17);
  // The seed is in: it also draws the synthetic data, so ranks that share an --init (equal
  // checksums) but not a --seed would otherwise train silently on different datasets.
  s << mode_name(o.mode) << '|' << o.model << '|' << o.data.kind << '|' << o.data.samples << '|' << o.seed << '|'
    << o.batch_size << '|' << o.epochs << '|' << o.lr << '|' << o.momentum << '|' << o.weight_decay << '|'
    << o.warmup_steps << '|' << o.max_steps << '|' << o.link << '|' << o.link_dilation << '|' << o.allreduce << '|'
    << o.fused << '|' << o.bucket_cap_mb << '|' << o.first_bucket_mb << '|' << o.device.backend;
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s.str()) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace dpscale
