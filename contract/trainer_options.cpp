// trainer_options.cpp — the option table, the CLI11 parser built from it, the fingerprint.
#include "trainer_options.h"

#include <CLI/CLI.hpp>
#include <climits>
#include <memory>
#include <type_traits>
#include <iostream>

#include "contract/diagnosis_options.h"
#include "contract/link_model.h"
#include "contract/option_paths.h"
#include "contract/option_values.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "models/optimizer.h"
#include "models/gemm/gemm_library.h"
#include "models/mlp_spec.h"
#include "models/model_spec.h"

namespace dpscale {

namespace {

const std::vector<Mode> kAll = {Mode::single, Mode::naive, Mode::interleaved, Mode::bucketed, Mode::sharded};
const std::vector<Mode> kDataParallel = {Mode::naive, Mode::interleaved, Mode::bucketed, Mode::sharded};

// Wraps a parser of the value into the setter of one option: a ValueError's complaint gets the
// flag; an OptionError from a parser that names its flag itself (--link, --model) passes as is.
template <class Parse>
std::function<void(TrainOptions&, const std::string&)> setter(std::string flag, Parse parse) {
  return [flag = std::move(flag), parse](TrainOptions& o, const std::string& v) {
    try {
      parse(o, v);
    } catch (const ValueError& e) {
      throw OptionError(flag, e.what());
    }
  };
}

// The builders take the field as a generic accessor, [](auto& o) -> auto& { return o.x; }, so
// one lambda serves the setter (TrainOptions&) and the getter (const TrainOptions&).
TrainerOption make(std::string key, std::string flag, std::string help, std::vector<Mode> modes, ValueKind kind) {
  return TrainerOption{std::move(key), std::move(flag), std::move(help), std::move(modes), kind, ConfigUse::options,
                       true, true, "", {}, {}, {}, {}};
}

template <class Field>
TrainerOption whole(std::string key, std::string flag, std::string help, std::vector<Mode> modes, int64_t lo,
                    int64_t hi, Field field) {
  TrainerOption t = make(std::move(key), flag, std::move(help), std::move(modes), ValueKind::whole);
  t.set = setter(flag, [=](TrainOptions& o, const std::string& v) {
    using T = std::remove_reference_t<decltype(field(o))>;
    field(o) = static_cast<T>(parse_whole(v, lo, hi));  // in range, so the narrowing is exact
  });
  t.get = [=](const TrainOptions& o) { return std::to_string(field(o)); };
  return t;
}

template <class Field>
TrainerOption real(std::string key, std::string flag, std::string help, std::vector<Mode> modes, Bound lo, Bound hi,
                   Field field) {
  TrainerOption t = make(std::move(key), flag, std::move(help), std::move(modes), ValueKind::real);
  t.set = setter(flag, [=](TrainOptions& o, const std::string& v) { field(o) = parse_real(v, lo, hi); });
  t.get = [=](const TrainOptions& o) { return format_number(field(o)); };
  return t;
}

// A text option whose value `check` validates (throwing ValueError or OptionError).
template <class Check, class Field>
TrainerOption text(std::string key, std::string flag, std::string help, std::vector<Mode> modes, ValueKind kind,
                   Check check, Field field) {
  TrainerOption t = make(std::move(key), flag, std::move(help), std::move(modes), kind);
  t.set = setter(flag, [=](TrainOptions& o, const std::string& v) {
    check(v);
    field(o) = v;
  });
  t.get = [=](const TrainOptions& o) { return field(o); };
  return t;
}

template <class Field>
TrainerOption choice(std::string key, std::string flag, std::string help, std::vector<Mode> modes,
                     std::vector<std::string> choices, std::string what, Field field) {
  TrainerOption t = text(std::move(key), std::move(flag), std::move(help), std::move(modes), ValueKind::choice,
                         [choices, what = std::move(what)](const std::string& v) { parse_choice(v, choices, what); },
                         field);
  t.choices = std::move(choices);
  return t;
}

template <class Field>
TrainerOption switch_(std::string key, std::string flag, std::string help, std::vector<Mode> modes, Field field) {
  TrainerOption t = make(std::move(key), flag, std::move(help), std::move(modes), ValueKind::switch_);
  t.set = setter(flag, [=](TrainOptions& o, const std::string& v) {
    if (v != "true" && v != "false") throw ValueError("must be true or false (got '" + v + "')");
    field(o) = v == "true";
  });
  t.get = [=](const TrainOptions& o) { return std::string(field(o) ? "true" : "false"); };
  return t;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> gemm_choices() {
  std::vector<std::string> c = {"auto"};
  for (const std::string& n : gemm_library_names()) c.push_back(n);
  return c;
}

TrainerOption with(TrainerOption t, ConfigUse use, bool shapes_run = true) {
  t.config = use;
  t.shapes_run = shapes_run;
  return t;
}

// Where a file lives, how long to wait, what to print, what to do after the timed epochs: the
// same measurement whatever the value.
TrainerOption unmeasured(TrainerOption t) {
  t.measured = false;
  return t;
}

// A path the trainer reads or writes, and its check.
TrainerOption path_of(TrainerOption t, std::function<void(const std::string&)> check) {
  t.path_check = std::move(check);
  return t;
}

// --data-dir: the directory must hold Fashion-MNIST, found by the first file the loader reads
// (a missing test split or a broken header is the loader's to name, before any training).
void check_fashion_mnist_dir(const std::string& dir) {
  parse_nonempty(dir);
  check_readable_file(fashion_mnist_files(dir).front());
}

// A config may sweep it as the list `key`.
TrainerOption axis(TrainerOption t, std::string key) {
  t.axis = std::move(key);
  return t;
}

std::vector<TrainerOption> build_table() {
  const auto path = [](const std::string& v) { parse_nonempty(v); };
  std::vector<TrainerOption> t = {
      with(text("model", "--model",
                "small | medium | large | xlarge, or widths like 784,256,10; a transformer: gpt-tiny | gpt2-small | "
                "gpt2-medium | gpt:layers=L,dim=D,heads=H,vocab=V,context=C",
                kAll, ValueKind::text, [](const std::string& v) { parse_model_spec(v, 0); },
                [](auto& o) -> auto& { return o.model; }),
           ConfigUse::sweep),
      whole("seq_len", "--seq-len", "a transformer's tokens per sample, at most its context (0 = the context)", kAll, 0,
            1 << 16, [](auto& o) -> auto& { return o.seq_len; }),
      choice("data", "--data", "synthetic | fashion-mnist | npy | text (text: byte-level tokens, a transformer's)", kAll,
             {"synthetic", "fashion-mnist", "npy", "text"}, "dataset", [](auto& o) -> auto& { return o.data.kind; }),
      whole("samples", "--samples", "training samples (0 = synthetic 32768 / all of a file)", kAll, 0, INT64_MAX / 2,
            [](auto& o) -> auto& { return o.data.samples; }),
      path_of(unmeasured(with(text("data_dir", "--data-dir", "directory of Fashion-MNIST's gzip IDX files", kAll, ValueKind::text, path,
                [](auto& o) -> auto& { return o.data.data_dir; }),
           ConfigUse::options, false)), check_fashion_mnist_dir),
      path_of(unmeasured(with(text("features", "--features", "npy: float32 features [N, in_width]", kAll, ValueKind::text, path,
                [](auto& o) -> auto& { return o.data.features; }),
           ConfigUse::options, false)), check_readable_file),
      path_of(unmeasured(with(text("labels", "--labels", "npy: int32/int64 labels [N]", kAll, ValueKind::text, path,
                [](auto& o) -> auto& { return o.data.labels; }),
           ConfigUse::options, false)), check_readable_file),
      path_of(unmeasured(with(text("tokens", "--tokens", "npy: a transformer's int32/int64 tokens [N, seq_len + 1]", kAll,
                ValueKind::text, path, [](auto& o) -> auto& { return o.data.tokens; }),
           ConfigUse::options, false)), check_readable_file),
      path_of(unmeasured(with(text("text", "--text", "text: a file read as byte-level tokens (vocabulary 256)", kAll,
                ValueKind::text, path, [](auto& o) -> auto& { return o.data.text; }),
           ConfigUse::options, false)), check_readable_file),
      whole("batch_size", "--batch-size", "global batch; each of K ranks takes batch/K rows", kAll, 1, INT_MAX,
                [](auto& o) -> auto& { return o.batch_size; }),
      whole("epochs", "--epochs", "passes over the data (an incomplete last batch is dropped)", kAll, 1, 1000000,
                [](auto& o) -> auto& { return o.epochs; }),
      // No upper bound: a huge rate is how a user (and a test) makes training diverge on purpose.
      real("lr", "--lr", "learning rate", kAll, {0.0, false}, {kNoLimit}, [](auto& o) -> auto& { return o.lr; }),
      real("momentum", "--momentum", "SGD momentum (0 = plain SGD)", kAll, {0.0}, {1.0, false},
           [](auto& o) -> auto& { return o.momentum; }),
      real("weight_decay", "--weight-decay", "weight decay (SGD: added to the gradient; AdamW: decoupled)", kAll,
           {0.0}, {kNoLimit}, [](auto& o) -> auto& { return o.weight_decay; }),
      axis(choice("optimizer", "--optimizer",
                  "sgd | adamw (torch.optim.AdamW: betas 0.9, 0.999, eps 1e-8, bias correction; moments in fp32)",
                  kAll, optimizer_names(), "optimizer", [](auto& o) -> auto& { return o.optimizer; }),
           "optimizer"),
      whole("warmup_steps", "--warmup-steps", "untimed forward+backward steps before training, no update", kAll, 0,
                1000000, [](auto& o) -> auto& { return o.warmup_steps; }),
      whole("max_steps", "--max-steps", "stop after this many optimizer steps (0 = no limit)", kAll, 0, INT64_MAX / 2,
            [](auto& o) -> auto& { return o.max_steps; }),
      [] {
        TrainerOption s{"seed", "--seed", "seed of the initial weights and of the synthetic data", kAll,
                        ValueKind::whole, ConfigUse::options, true, true, "", {}, {}, {}, {}};
        s.set = setter("--seed", [](TrainOptions& o, const std::string& v) { o.seed = parse_unsigned(v); });
        s.get = [](const TrainOptions& o) { return std::to_string(o.seed); };
        return s;
      }(),
      with(choice("backend", "--backend", "auto | cpu | cuda (auto: CUDA if a GPU answers)", kAll, {"auto", "cpu", "cuda"},
                  "backend", [](auto& o) -> auto& { return o.device.backend; }),
           ConfigUse::sweep),
      with(whole("threads", "--threads", "GEMM library threads per process (CPU backend)", kAll, 1, 1024,
                     [](auto& o) -> auto& { return o.device.threads; }),
           ConfigUse::options, false),
      axis(choice("gemm", "--gemm",
                  "CPU GEMM library: auto | " + join(gemm_library_names(), " | ") +
                      " (auto: the fastest on this model's GEMMs whose results match a float64 reference; "
                      "measured once per machine, cached)",
                  kAll, gemm_choices(), "GEMM library", [](auto& o) -> auto& { return o.device.gemm; }),
           "gemms"),
      axis(switch_("tf32", "--tf32", "allow TF32 tensor-core GEMMs (CUDA backend)", kAll,
              [](auto& o) -> auto& { return o.device.tf32; }), "tf32"),
      path_of(unmeasured(with(text("init", "--init", "load initial weights from a safetensors file", kAll, ValueKind::text, path,
                [](auto& o) -> auto& { return o.init_path; }),
           ConfigUse::never, false)), check_readable_file),
      path_of(unmeasured(with(text("save", "--save", "write final weights to a safetensors file", kAll, ValueKind::text, path,
                [](auto& o) -> auto& { return o.save_path; }),
           ConfigUse::never, false)), check_writable_file),
      unmeasured(with(switch_("quiet", "--quiet", "no per-epoch progress on stderr", kAll, [](auto& o) -> auto& { return o.quiet; }),
           ConfigUse::never, false)),
      with(text("link", "--link", "emulated link (MPI): none | " + link_preset_names(" | ") + " | ALPHA_US:GBPS | intra=SPEC,inter=SPEC[,ranks-per-node=L]",
                kDataParallel, ValueKind::text, [](const std::string& v) { parse_link(v); },
                [](auto& o) -> auto& { return o.link; }),
           ConfigUse::sweep),
      with(text("link_dilation", "--link-dilation", "multiply modelled link times by F, or auto:TFLOPS", kDataParallel,
                ValueKind::text, [](const std::string& v) { parse_dilation(v); },
                [](auto& o) -> auto& { return o.link_dilation; }),
           ConfigUse::sweep),
      axis(text("allreduce", "--allreduce", "MPI all-reduce algorithm: native | ring | star | hier", kDataParallel,
           ValueKind::choice, [](const std::string& v) { parse_allreduce_algo(v); },
           [](auto& o) -> auto& { return o.allreduce; }), "allreduces"),
      switch_("fused", "--fused", "one all-reduce of the whole gradient buffer", {Mode::naive},
              [](auto& o) -> auto& { return o.fused; }),
      axis(with(real("bucket_cap_mb", "--bucket-cap-mb", "bucket cap in MiB (PyTorch DDP's bucket_cap_mb)", {Mode::bucketed, Mode::sharded},
                {0.0, false}, {1e6}, [](auto& o) -> auto& { return o.bucket_cap_mb; }),
           ConfigUse::sweep), "bucket_caps_mb"),
      axis(whole("shard_stage", "--shard-stage",
                 "sharded: 1 = optimizer state sharded, 2 = gradients too (each bucket reduce-scattered), "
                 "3 = parameters too (each layer all-gathered before its forward and its backward)", {Mode::sharded},
                 1, 3, [](auto& o) -> auto& { return o.shard_stage; }),
           "shard_stage"),
      axis(whole("prefetch_units", "--prefetch-units",
                 "sharded stage 3: layers all-gathered ahead of the one computing (0 = each on demand)", {Mode::sharded},
                 0, 64, [](auto& o) -> auto& { return o.prefetch_units; }),
           "prefetch_units"),
      real("first_bucket_mb", "--first-bucket-mb", "cap of the first bucket in MiB", {Mode::bucketed, Mode::sharded}, {0.0, false},
           {1e6}, [](auto& o) -> auto& { return o.first_bucket_mb; }),
      // Measured: ranks that share a GPU time each other's kernels, so such a run is a point of its
      // own (its record says gpu_shared, and the reports draw no speedup from it).
      switch_("share_gpu", "--share-gpu",
              "let ranks share a GPU (CUDA): NCCL sees each rank as its own host and sums over loopback "
              "sockets; for correctness at K > GPUs, never for timing (records say gpu_shared)",
              kDataParallel, [](auto& o) -> auto& { return o.share_gpu; }),

      // --- reliability ---
      // In the fingerprint although it does not change the arithmetic: every rank must stop at
      // the same step when the check fires, so all ranks must check at the same steps.
      whole("finite_check_every", "--finite-check-every",
            "check gradients and weights for NaN/inf every N steps (0 = the loss only)", kAll, 0, 1000000,
            [](auto& o) -> auto& { return o.finite_check_every; }),
      // 5 minutes: under the sweep's 30-minute run timeout, so a hang is named by the trainer, and
      // far above this suite's longest legitimate wait (a rank loading data at start-up, rank 0's
      // test evaluation and --save at the end: seconds). PyTorch's NCCL default is 10 minutes.
      unmeasured(with(real("collective_timeout", "--collective-timeout",
                "abort the job when a collective (all-reduce, barrier, gather) waits longer (seconds)",
                kDataParallel, {1.0}, {604800.0}, [](auto& o) -> auto& { return o.collective_timeout_s; }),
           ConfigUse::options, false)),
      // --- why a run scaled as it did (faults to inject, the triad, the trace) ---
      text("inject_delay", "--inject-delay", "RANK:MS[:compute|loader|link]: that rank is MS slower each step, in backward (spread over its gradients), its loader or its link (a straggler)",
           kDataParallel, ValueKind::text, [](const std::string& v) { parse_inject_delay(v); },
           [](auto& o) -> auto& { return o.inject_delay; }),
      real("loader_delay_ms", "--loader-delay-ms", "every rank waits MS for each batch (a starved input pipeline)",
           kAll, {0.0}, {600000.0}, [](auto& o) -> auto& { return o.loader_delay_ms; }),
      whole("prefetch", "--prefetch", "fetch the next N batches in the background while a step runs", kAll, 0, 64,
            [](auto& o) -> auto& { return o.prefetch; }),
      unmeasured(whole("triad", "--triad", "after the epochs: N full, N compute-only and N comm-only steps (weights restored)",
            kDataParallel, 0, 100000, [](auto& o) -> auto& { return o.triad; })),
      path_of(unmeasured(with(text("trace", "--trace", "write a Chrome/Perfetto trace-event JSON of --trace-steps (all ranks)", kAll,
                ValueKind::text, path, [](auto& o) -> auto& { return o.trace_path; }),
           ConfigUse::never, false)), check_writable_file),
      unmeasured(with(text("trace_steps", "--trace-steps", "A:B: the timed steps --trace records (1-based, inclusive)", kAll,
                ValueKind::text, [](const std::string& v) { parse_trace_steps(v); },
                [](auto& o) -> auto& { return o.trace_steps; }),
           ConfigUse::never, false)),
      // --- gradient accumulation, the gradients' wire format, DDP's bucket rule ---
      axis(with(whole("accum_steps", "--accum-steps",
                 "micro-batches of --batch-size per optimizer step: gradients accumulate locally, one "
                 "all-reduce on the last (DDP's no_sync); the step is one device's at N x batch",
                 kAll, 1, 1 << 20, [](auto& o) -> auto& { return o.accum_steps; }),
           // In a config's "options" (one value for every run) or swept by its list.
           ConfigUse::options), "accum_steps"),
      axis(with(choice("grad_comm", "--grad-comm",
                  "gradients on the wire: fp32 | bf16 | fp16 (2 bytes each, summed in fp32 where the "
                  "algorithm allows, cast back)",
                  kDataParallel, {"fp32", "bf16", "fp16"}, "gradient format", [](auto& o) -> auto& { return o.grad_comm; }),
           ConfigUse::options), "grad_comm"),
      axis(choice("bucket_rule", "--bucket-rule",
             "strict: a bucket never exceeds its cap | ddp: close a bucket after the tensor that "
             "reaches the cap (PyTorch DDP)",
             {Mode::bucketed, Mode::sharded}, {"strict", "ddp"}, "bucket rule", [](auto& o) -> auto& { return o.bucket_rule; }), "bucket_rule"),
  };
  return t;
}

}  // namespace

bool TrainerOption::accepted_by(Mode m) const {
  for (Mode x : modes) {
    if (x == m) return true;
  }
  return false;
}

void TrainerOption::check_path(const std::string& value) const {
  if (!path_check) return;
  try {
    path_check(value);
  } catch (const ValueError& e) {
    throw OptionError(flag, e.what());
  }
}

const std::vector<TrainerOption>& trainer_options() {
  static const std::vector<TrainerOption> table = build_table();
  return table;
}

const TrainerOption* find_option(std::string_view key) {
  for (const TrainerOption& t : trainer_options()) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

const TrainerOption& option(std::string_view key) {
  if (const TrainerOption* t = find_option(key)) return *t;
  throw std::logic_error("no trainer option '" + std::string(key) + "'");
}

bool parse_options(int argc, char** argv, Mode mode, TrainOptions& o) {
  o = TrainOptions{};
  o.mode = mode;
  const ModeInfo& info = mode_info(mode);
  CLI::App app{info.description, info.executable};
  app.get_formatter()->column_width(34);
  const std::vector<TrainerOption>& table = trainer_options();
  // CLI11 collects the text; the table's parsers check and store it, in table order. A switch
  // is read into a bool, so `--quiet=maybe` is refused by CLI11 rather than taken as on.
  std::vector<std::string> given(table.size());
  std::unique_ptr<bool[]> switched(new bool[table.size()]());
  std::vector<CLI::Option*> cli(table.size(), nullptr);
  for (size_t i = 0; i < table.size(); ++i) {
    const TrainerOption& t = table[i];
    if (!t.accepted_by(mode)) continue;
    if (t.kind == ValueKind::switch_) {
      cli[i] = app.add_flag(t.flag, switched[i], t.help);
    } else {
      cli[i] = app.add_option(t.flag, given[i], t.help)->default_str(t.get(o));
    }
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
  for (size_t i = 0; i < table.size(); ++i) {
    if (!cli[i] || cli[i]->count() == 0) continue;
    table[i].set(o, table[i].kind == ValueKind::switch_ ? (switched[i] ? "true" : "false") : given[i]);
  }
  // Then the files the options name, once every value is known good: a bad number is reported
  // before a path is touched.
  for (size_t i = 0; i < table.size(); ++i) {
    if (cli[i] && cli[i]->count() > 0) table[i].check_path(given[i]);
  }
  o.data.seed = o.seed;  // --seed drives the synthetic data too, as its help says
  return true;
}

uint64_t options_fingerprint(const TrainOptions& o) {
  // Every value as the table renders it (format_number keeps full precision, so --lr 0.01 and
  // --lr 0.0100001 differ). The seed is in: it also draws the synthetic data, so ranks that share
  // an --init (equal checksums) but not a --seed would otherwise train on different datasets.
  std::string s = mode_name(o.mode);
  for (const TrainerOption& t : trainer_options()) {
    if (t.shapes_run && t.accepted_by(o.mode)) s += "|" + t.key + "=" + t.get(o);
  }
  return fnv1a64(s.data(), s.size());
}

}  // namespace dpscale
