// record.cpp — the record's field table, and RunRecord <-> JSON through it.
#include "record.h"

#include <ctime>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "core/json_int.h"

namespace dpscale {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The JSON type a member of C++ type T is written as.
template <class T>
struct TypeName;
template <>
struct TypeName<std::string> {
  static std::string get() { return "string"; }
};
template <>
struct TypeName<int> {
  static std::string get() { return "int"; }
};
template <>
struct TypeName<int64_t> {
  static std::string get() { return "int"; }
};
template <>
struct TypeName<uint64_t> {
  static std::string get() { return "int"; }
};
template <>
struct TypeName<bool> {
  static std::string get() { return "bool"; }
};
template <>
struct TypeName<double> {
  static std::string get() { return "float"; }
};
template <class T>
struct TypeName<std::vector<T>> {
  static std::string get() { return TypeName<T>::get() + "[]"; }
};
template <class T>
struct TypeName<std::optional<T>> {
  static std::string get() { return TypeName<T>::get() + " | null"; }
};

// Integer fields take JSON integers in T's range only (core/json_int.h); other types are
// left to get_to's own type check.
template <class T>
bool integers_fit(const json& x, const T*) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return json_integer_fits<T>(x);
  } else {
    return true;
  }
}
template <class T>
bool integers_fit(const json& x, const std::vector<T>*) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return !x.is_array() || json_integers_fit<T>(x);  // not an array: get_to refuses it
  } else {
    return true;
  }
}

template <class T>
void read_value(const json& j, const std::string& name, T& out) {
  if (!j.contains(name)) throw std::runtime_error("record has no field '" + name + "'");
  if (!integers_fit(j.at(name), static_cast<const T*>(nullptr))) {
    throw std::runtime_error("record field '" + name + "' has the wrong type (want " + TypeName<T>::get() + " in range)");
  }
  try {
    j.at(name).get_to(out);
  } catch (const json::exception&) {
    throw std::runtime_error("record field '" + name + "' has the wrong type");
  }
}
// A non-finite number is written as null (JSON has no NaN): read it back as NaN, so a record
// of a diverged run reads back.
void read_value(const json& j, const std::string& name, std::vector<double>& out) {
  if (!j.contains(name)) throw std::runtime_error("record has no field '" + name + "'");
  const json& v = j.at(name);
  if (!v.is_array()) throw std::runtime_error("record field '" + name + "' has the wrong type");
  out.clear();
  for (const json& x : v) {
    if (x.is_null()) {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (x.is_number()) {
      out.push_back(x.get<double>());
    } else {
      throw std::runtime_error("record field '" + name + "' has the wrong type");
    }
  }
}
template <class T>
void read_value(const json& j, const std::string& name, std::optional<T>& out) {
  out.reset();
  if (!j.contains(name) || j.at(name).is_null()) return;
  T v;
  read_value(j, name, v);
  out = std::move(v);
}

template <class T>
ordered_json write_value(const T& v) {
  return ordered_json(v);
}
template <class T>
ordered_json write_value(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

template <class T>
RecordField field(std::string name, T RunRecord::*member, std::string meaning) {
  RecordField f;
  f.name = name;
  f.type = TypeName<T>::get();
  f.meaning = std::move(meaning);
  f.write = [name, member](const RunRecord& r, ordered_json& j) { j[name] = write_value(r.*member); };
  f.read = [name, member](const json& j, RunRecord& r) { read_value(j, name, r.*member); };
  return f;
}

// A field added after records were already committed (results/, docs/): a record
// without it reads as the member's default, so older results files still report.
template <class T>
RecordField later_field(std::string name, T RunRecord::*member, std::string meaning) {
  RecordField f = field(name, member, std::move(meaning));
  auto read = f.read;
  f.read = [name, read](const json& j, RunRecord& r) {
    if (j.contains(name)) read(j, r);
  };
  return f;
}

std::vector<RecordField> build_fields() {
  using R = RunRecord;
  return {
      field("schema", &R::schema, "`\"dpscale.result/1\"`"),
      field("mode", &R::mode, "`single` | `naive` | `interleaved` | `bucketed` | `sharded`"),
      field("backend", &R::backend, "`cpu` | `cuda`"),
      field("device_name", &R::device_name, "CPU model (+ BLAS threads) or GPU name"),
      field("model", &R::model,
            "`small` | `medium` | `large` | `xlarge` | `custom`; a transformer: `gpt-tiny` | `gpt2-small` | "
            "`gpt2-medium` | its spec `gpt:layers=L,dim=D,heads=H,vocab=V,context=C`"),
      field("widths", &R::widths, "the MLP's layer widths, input first (empty for a transformer)"),
      field("n_params", &R::n_params,
            "parameters (small 1,462,538 · medium 8,432,138 · large 35,211,786 · xlarge 51,993,098 · "
            "gpt-tiny 120,576 · gpt2-small 124,439,808 · gpt2-medium 354,823,168)"),
      later_field("seq_len", &R::seq_len, "a transformer's tokens per sample (`--seq-len`); 0 for the MLP"),
      later_field("tensor_count", &R::tensor_count,
                  "tensors in the flat gradient buffer, each one all-reduce of interleaved (gpt2-small 148); 0 in older records"),
      later_field("largest_tensor_bytes", &R::largest_tensor_bytes,
                  "fp32 bytes of the largest tensor (a transformer's tied embedding); 0 in older records"),
      field("world_size", &R::world_size, "ranks K (1 for single)"),
      field("n_nodes", &R::n_nodes, "distinct nodes the ranks ran on"),
      field("ranks_per_node", &R::ranks_per_node, "the most ranks on one node (2 for 2+2; null in older records)"),
      field("nodes", &R::nodes, "the nodes' host names, comma-separated, in the order of their first rank"),
      field("global_batch", &R::global_batch, "global batch B"),
      field("local_batch", &R::local_batch, "rows per rank, B/K"),
      field("dataset", &R::dataset, "`synthetic` | `fashion-mnist` | `npy` | `text`"),
      field("n_samples", &R::n_samples, "training samples"),
      field("epochs", &R::epochs, "requested epochs"),
      field("steps_per_epoch", &R::steps_per_epoch, "optimizer steps per epoch, ⌊n_samples/(B·accum_steps)⌋"),
      field("steps", &R::steps, "optimizer steps taken"),
      field("lr", &R::lr, "SGD learning rate"),
      field("seed", &R::seed, "seed of the weights and the synthetic data"),
      field("threads", &R::threads, "GEMM library threads per rank"),
      field("epoch_times_s", &R::epoch_times_s, "per epoch, the slowest rank's wall time"),
      field("avg_epoch_s", &R::avg_epoch_s, "mean of `epoch_times_s` (the workshop's \"Avg Epoch\")"),
      field("throughput_samples_per_s", &R::throughput_samples_per_s, "samples trained per second: steps·B·accum_steps / Σ epoch times (every micro-batch counts)"),
      later_field("tokens_per_s", &R::tokens_per_s, "a transformer's tokens trained per second, throughput_samples_per_s · seq_len; 0 for the MLP"),
      field("losses", &R::losses, "per epoch, mean over steps of the true global-batch loss"),
      field("loss_global", &R::loss_global, "the same as `losses` (named as the workshop discusses it)"),
      field("loss_rank0", &R::loss_rank0, "per epoch, mean of rank 0's own shard loss (the workshop's logged loss)"),
      field("test_accuracy", &R::test_accuracy, "on the test split after training (Fashion-MNIST), else null"),
      field("comm", &R::comm, "`none` | `mpi` | `nccl`"),
      field("allreduce", &R::allreduce, "`none` | `native` | `ring` | `star` | `hier` | `nccl`"),
      field("link", &R::link, "emulated link (`none` if off)"),
      field("link_alpha_us", &R::link_alpha_us, "its α per hop (µs)"),
      field("link_gbps", &R::link_gbps, "its β (GB/s)"),
      field("link_dilation", &R::link_dilation, "time dilation F of the modelled link times"),
      field("comm_s", &R::comm_s, "naive: per-epoch blocking all-reduce phase"),
      field("exposed_comm_s", &R::exposed_comm_s, "interleaved/bucketed/sharded: per-epoch time `finish()` waited (sharded: and the waits for all-gathers, after the update at stages 1 and 2, before a layer at stage 3)"),
      field("comm_busy_s", &R::comm_busy_s, "DP modes: per-epoch summed all-reduce durations"),
      field("compute_s", &R::compute_s, "`avg_epoch_s` minus the comm wait above"),
      field("allreduce_calls_per_step", &R::allreduce_calls_per_step, "all-reduce calls per step"),
      field("allreduce_bytes_per_step", &R::allreduce_bytes_per_step,
            "bytes the all-reduces send per step, in the wire format `grad_comm` (the loss slot in 4 bytes, included)"),
      field("bucket_cap_mb", &R::bucket_cap_mb, "bucketed only: the bucket cap (MiB)"),
      field("first_bucket_mb", &R::first_bucket_mb, "bucketed only: the first bucket's cap (MiB)"),
      field("n_buckets", &R::n_buckets, "bucketed only: buckets per step"),
      field("bucket_bytes", &R::bucket_bytes, "bucketed: each bucket's gradient bytes in the wire format, in launch order"),
      field("per_rank_epoch_s", &R::per_rank_epoch_s, "each rank's mean epoch time (stragglers show here)"),
      field("mpi_library", &R::mpi_library, "MPI library version line"),
      field("nccl_version", &R::nccl_version, "NCCL version (\"\" if none)"),
      field("version", &R::version, "`git describe` of the build"),
      field("timestamp", &R::timestamp, "UTC start time, ISO 8601"),
      // --- reliability ---
      field("replicas_agree", &R::replicas_agree,
            "DP modes: every rank's final weights have rank 0's FNV-1a checksum (false fails the run); null for single"),

      // --- why a run scaled as it did (README "Why a run scaled as it did") ---
      later_field("per_rank_compute_s", &R::per_rank_compute_s,
            "each rank's per-epoch compute: forward + loss + backward until its last gradient was ready"),
      later_field("per_rank_wait_s", &R::per_rank_wait_s, "each rank's per-epoch wait in `finish()` (the all-reduce)"),
      later_field("loader_s", &R::loader_s, "per epoch, mean over ranks: time a step waited for its batch"),
      later_field("loader_delay_ms", &R::loader_delay_ms, "`--loader-delay-ms`: each batch's emulated fetch time"),
      later_field("prefetch", &R::prefetch, "`--prefetch`: batches fetched ahead in the background"),
      later_field("inject_delay", &R::inject_delay, "`--inject-delay RANK:MS` (\"\" if none)"),
      later_field("bottleneck", &R::bottleneck, "`compute` | `communication` | `loader` | `straggler` (the README's rule)"),
      later_field("straggler_rank", &R::straggler_rank,
            "the rank slower than the others (`straggler_cause` says where; `bottleneck` is `straggler` when it bounds the step), else null"),
      later_field("diagnosis", &R::diagnosis, "one line: the label and the number behind it"),
      later_field("triad_steps", &R::triad_steps, "`--triad N` (0: no triad)"),
      later_field("triad_step_s", &R::triad_step_s, "triad: a full step (compute + all-reduces), slowest rank"),
      later_field("compute_only_step_s", &R::compute_only_step_s, "triad: the same step with every all-reduce skipped"),
      later_field("comm_only_step_s", &R::comm_only_step_s, "triad: the step's all-reduces alone (same sizes, order, link)"),
      later_field("exposed_comm_step_s", &R::exposed_comm_step_s, "triad: `triad_step_s` − `compute_only_step_s`"),
      later_field("overlap_pct", &R::overlap_pct, "triad: 100·max(0, min(1, 1 − exposed/comm_only)) (OSU)"),
      later_field("allreduce_unit_bytes", &R::allreduce_unit_bytes,
            "DP modes: bytes each all-reduce of a step sends (wire format), in launch order (bucket; tensor for interleaved)"),
      later_field("bucket_busbw_gbps", &R::bucket_busbw_gbps,
            "DP modes: each all-reduce's median bus bandwidth, 2(K−1)/K·bytes/s/1e9, as `allreduce_unit_bytes`"),
      // accumulation and the gradients' wire format (null in older records)
      field("accum_steps", &R::accum_steps,
            "micro-batches of `global_batch` rows per optimizer step (`--accum-steps`; null in older records)"),
      field("grad_comm", &R::grad_comm,
            "DP modes: gradients' wire format `fp32` | `bf16` | `fp16` (`--grad-comm`); null for single and older records"),
      field("bucket_rule", &R::bucket_rule,
            "bucketed only: `strict` (a bucket never exceeds its cap) | `ddp` (PyTorch DDP: closes after the tensor that reaches the cap)"),
      later_field("cublas_math", &R::cublas_math,
                  "the GEMMs' cuBLAS math mode: `pedantic` (exact fp32, the default) | `default` (CUBLAS_DEFAULT_MATH) | "
                  "`tf32` (`--tf32`); `none` on the CPU backend; \"\" in older records"),
      later_field("straggler_cause", &R::straggler_cause,
            "DP modes: `compute` | `loader` | `link`, where `straggler_rank` loses its time (per-step medians; README's rule); null: none"),
      later_field("tf32", &R::tf32, "`--tf32`: TF32 tensor-core GEMMs allowed (CUDA); absent in older records: false"),
      // the CPU backend's GEMM library (\"\" on CUDA, whose GEMMs are cuBLAS's: `cublas_math`, and in older records)
      later_field("gemm_library", &R::gemm_library, "CPU: the GEMM library, `openblas` | `blis` | `onednn` (`--gemm`)"),
      later_field("gemm_kernel", &R::gemm_kernel,
                  "CPU: its version and the kernels it reports running here (OpenBLAS's core, BLIS's "
                  "sub-configuration, oneDNN's instruction set)"),
      later_field("gemm_pinned", &R::gemm_pinned,
                  "CPU: the environment variable that pinned those kernels, as NAME=VALUE (`OPENBLAS_CORETYPE`, "
                  "`BLIS_ARCH_TYPE`, `ONEDNN_MAX_CPU_ISA`); \"\" when none was set"),
      later_field("gemm_choice", &R::gemm_choice,
                  "CPU: how it was chosen: `requested`, `auto: measured`, `auto: cached in PATH` (`~/...` under $HOME), `auto: the only "
                  "library built in`, `auto: not measured (...)` (OpenBLAS: the GEMMs would not fit in memory)"),
      later_field("gemm_passed_over", &R::gemm_passed_over,
                  "CPU, `--gemm auto`: each library not chosen and why (slower, with both rates; wrong results "
                  "against the float64 reference; not built in), `; `-separated"),
      // --- contention: time the ranks' threads sat runnable, waiting for a CPU (docs/diagnosis.md) ---
      later_field("per_rank_run_delay_s", &R::per_rank_run_delay_s,
                  "each rank's per-epoch run delay: its threads' time runnable but not running (schedstat); [] if unread"),
      later_field("per_rank_involuntary_switches", &R::per_rank_involuntary_switches,
                  "each rank's per-epoch involuntary context switches (its threads preempted while runnable)"),
      later_field("per_rank_step_run_delay_s", &R::per_rank_step_run_delay_s,
                  "each rank's per-step median run delay, all its threads over the whole step"),
      later_field("epoch_run_delay_share", &R::epoch_run_delay_share,
                  "per epoch, the largest rank's run delay / that epoch's time"),
      later_field("run_delay_share", &R::run_delay_share,
                  "the largest rank's run delay over the timed epochs / their time: the disturbance rule's figure; null if unread"),
      later_field("contended_rank", &R::contended_rank,
                  "DP modes: the rank that stood out, its excess matched by its own run delay: contended, not a straggler; else null"),
      later_field("contended_cause", &R::contended_cause,
                  "DP modes: `compute` | `loader` | `link`, the excess of `contended_rank`; null: none"),
      later_field("finite_check", &R::finite_check,
                  "what the NaN/inf check covered: `optimizer` (every `finite_check_every` steps, each gradient as the "
                  "update read it, after the all-reduce, and each updated weight, in the update's own pass; warm-up: "
                  "passes of their own) | `off` (the loss only); \"\" in older records"),
      later_field("finite_check_every", &R::finite_check_every, "`--finite-check-every` (0: off); null in older records"),
      later_field("forward_epilogue", &R::forward_epilogue,
                  "how the forward added each layer's bias and ReLU: `pass` (a pass of its own after the GEMM: the CPU) | "
                  "`cublaslt` (inside the GEMM, cuBLASLt's epilogue: CUDA) | `cublaslt+pass` (CUDA, some layers in a "
                  "pass: cuBLASLt had no kernel for their call); \"\" in older records"),
      later_field("gpu_shared", &R::gpu_shared,
                  "`--share-gpu` put two or more ranks on one GPU: a correctness run, from which `dpscale report`, "
                  "`compare` and `predict` draw no speedups; absent in older records: false"),
      // --- the optimizer and memory per rank (sharded: docs/sharded.md) ---
      later_field("optimizer", &R::optimizer, "`--optimizer`: `sgd` | `adamw`; \"\" in older records"),
      later_field("shard_stage", &R::shard_stage,
                  "sharded: `--shard-stage` 1 (optimizer state sharded) | 2 (+ gradients) | 3 (+ parameters); 0 for "
                  "the other modes"),
      later_field("prefetch_units", &R::prefetch_units,
                  "sharded stage 3: `--prefetch-units`, the layers all-gathered ahead of the one computing; null otherwise"),
      later_field("param_bytes_per_rank", &R::param_bytes_per_rank,
                  "bytes of parameters rank 0 holds: the flat buffer (padding included); stage 3: the most it left "
                  "resident in a step after the first update (its shard, the root's units, the layers gathered), counted"),
      later_field("grad_bytes_per_rank", &R::grad_bytes_per_rank,
                  "bytes of gradient buffer rank 0 holds (the flat buffer with the loss slot); stage 3: the most it "
                  "left resident in a step after the first update (its shard, the layers not yet reduce-scattered), counted"),
      later_field("optim_bytes_per_rank", &R::optim_bytes_per_rank,
                  "bytes of optimizer state rank 0 holds (SGD momentum: 4 per element updated; AdamW: 8; sharded: its shard's)"),
      later_field("peak_device_bytes", &R::peak_device_bytes,
                  "CUDA: the most bytes rank 0's device allocator had out at once; 0 on the CPU"),
      later_field("peak_rss_bytes", &R::peak_rss_bytes,
                  "the largest rank's peak resident memory over the timed epochs (Linux VmHWM, reset as they begin): "
                  "what a rank held, measured; 0 where unread"),
      later_field("reduce_scatter_bytes_per_step", &R::reduce_scatter_bytes_per_step,
                  "sharded: bytes of the buffers reduce-scattered per step, in the wire format (a rank sends (K−1)/K of them)"),
      later_field("allgather_bytes_per_step", &R::allgather_bytes_per_step,
                  "sharded: bytes of the buffers all-gathered per step, fp32 (a rank sends (K−1)/K of them)"),
      later_field("allgather_s", &R::allgather_s, "sharded: per-epoch summed all-gather durations (part of `comm_busy_s`)"),
      later_field("allgather_exposed_s", &R::allgather_exposed_s,
                  "sharded: per-epoch time the step waited for all-gathers (the part no compute hid)"),
  };
}

}  // namespace

const std::vector<RecordField>& record_fields() {
  static const std::vector<RecordField> fields = build_fields();
  return fields;
}

nlohmann::ordered_json to_json(const RunRecord& r) {
  nlohmann::ordered_json j;
  for (const RecordField& f : record_fields()) f.write(r, j);
  return j;
}

RunRecord record_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("record is not a JSON object");
  RunRecord r;
  for (const RecordField& f : record_fields()) {
    f.read(j, r);
    if (f.name == "schema" && r.schema != kResultSchema) {
      throw std::runtime_error("record schema '" + r.schema + "' is not " + kResultSchema);
    }
  }
  return r;
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// cmake/git_version.cmake generates it at every build.
const char* build_git_version();

const char* build_version() { return build_git_version(); }

std::string format_results_line(const RunRecord& r) { return kResultPrefix + to_json(r).dump(); }

std::optional<nlohmann::json> find_results_json(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  const std::string prefix = kResultPrefix;
  while (std::getline(in, line)) {
    const auto at = line.find(prefix);
    if (at == std::string::npos) continue;
    try {
      auto j = nlohmann::json::parse(line.substr(at + prefix.size()));
      if (j.is_object()) return j;
    } catch (const nlohmann::json::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace dpscale
