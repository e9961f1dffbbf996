// option_rules.cpp — the rules of option_rules.h.
#include "option_rules.h"

#include <string>
#include <utility>

#include "contract/diagnosis_options.h"
#include "contract/link_model.h"
#include "core/errors.h"
#include "models/gpt/gpt_spec.h"

namespace dpscale {

void check_option_rules(const TrainOptions& o, int world_size) {
  if (o.share_gpu && o.device.backend == "cpu") {
    throw InputError("--share-gpu shares a GPU between NCCL ranks: it does not combine with --backend cpu (MPI ranks share no GPU)");
  }
  if (o.share_gpu && o.allreduce == "hier") {
    throw InputError("--share-gpu does not combine with --allreduce hier (hier is MPI's, on the CPU backend; NCCL runs the shared GPU's all-reduces)");
  }
  const LinkModel link = parse_link(o.link);
  if (link.ranks_per_node > 0 && world_size % link.ranks_per_node != 0) {
    throw InputError("--link " + o.link + ": ranks-per-node=" + std::to_string(link.ranks_per_node) +
                     " does not divide the " + std::to_string(world_size) + " ranks into whole nodes");
  }
  if (o.allreduce == "hier" && o.grad_comm != "fp32") {
    throw InputError("--grad-comm " + o.grad_comm + " does not combine with --allreduce hier (use ring, star or native)");
  }
  // The sharded mode's reduce-scatter and all-gather exist as the library's and as our ring
  // (comm/shard_collectives.h); star and hier have no halves of their own.
  if (o.mode == Mode::sharded && o.allreduce != "native" && o.allreduce != "ring") {
    throw InputError("--allreduce " + o.allreduce + " has no reduce-scatter or all-gather for the sharded mode (use native or ring)");
  }
  // Stages 1 and 2 gather nothing before a layer's forward: a prefetch depth there would name
  // a point that differs from another in nothing it measures.
  if (o.mode == Mode::sharded && o.shard_stage < 3 && o.prefetch_units != TrainOptions{}.prefetch_units) {
    throw InputError("--prefetch-units applies to --shard-stage 3 (stage " + std::to_string(o.shard_stage) +
                     " gathers no layer before its forward)");
  }
  // The triad's compute-only phase is forward, backward and update with no collective; stage 3's
  // forward cannot read a layer it has not gathered. Its overlap is in the record already:
  // allgather_exposed_s against allgather_s.
  if (o.mode == Mode::sharded && o.shard_stage == 3 && o.triad > 0) {
    throw InputError("--triad does not combine with --shard-stage 3 (its forward gathers every layer: there is no "
                     "compute-only step; the record's allgather_exposed_s against allgather_s is its overlap)");
  }
}

void check_model_options(const TrainOptions& o) {
  if (!is_gpt_model(o.model)) {
    for (const auto& [flag, set] : {std::pair<const char*, bool>{"--seq-len", o.seq_len != 0},
                                    {"--tokens", !o.data.tokens.empty()}, {"--text", !o.data.text.empty()}}) {
      if (set) throw InputError(std::string(flag) + " is a transformer's option; --model " + o.model + " is an MLP");
    }
  } else {
    for (const auto& [flag, set] : {std::pair<const char*, bool>{"--features", !o.data.features.empty()},
                                    {"--labels", !o.data.labels.empty()}}) {
      if (set) throw InputError(std::string(flag) + " is the MLP's option; a transformer's npy data is --tokens FILE.npy");
    }
  }
}

void check_diagnosis_options(const TrainOptions& o, int world_size, Backend backend) {
  const InjectDelay d = parse_inject_delay(o.inject_delay);
  if (d.enabled() && d.cause == DelayCause::link && backend != Backend::cpu) {
    throw InputError("--inject-delay " + o.inject_delay + ": a slower link is emulated on MPI (--backend cpu) only");
  }
  if (d.enabled() && d.rank >= world_size) {
    throw InputError("--inject-delay: rank " + std::to_string(d.rank) + " does not exist (the job has " +
                     std::to_string(world_size) + " ranks: 0.." + std::to_string(world_size - 1) + ")");
  }
}

void check_data_rules(const TrainOptions& o, int64_t n_samples) {
  if (o.batch_size > n_samples) {
    throw InputError("--batch-size " + std::to_string(o.batch_size) + " is larger than the " + std::to_string(n_samples) +
                     " training samples");
  }
  const int64_t rows_per_step = static_cast<int64_t>(o.batch_size) * o.accum_steps;
  if (rows_per_step > n_samples) {
    throw InputError("--accum-steps " + std::to_string(o.accum_steps) + " x --batch-size " + std::to_string(o.batch_size) +
                     " = " + std::to_string(rows_per_step) + " rows per optimizer step, more than the " +
                     std::to_string(n_samples) + " training samples");
  }
  if (o.trace_path.empty()) return;
  // The timed steps, as the training loop counts them: whole steps per epoch (an incomplete last
  // one is dropped), every epoch, stopped at --max-steps.
  const int64_t per_epoch = n_samples / rows_per_step;
  int64_t timed = per_epoch * o.epochs;
  if (o.max_steps > 0 && o.max_steps < timed) timed = o.max_steps;
  const TraceSteps steps = parse_trace_steps(o.trace_steps);
  if (steps.last > timed) {
    throw InputError("--trace-steps " + o.trace_steps + " goes past the run's last timed step: it has " +
                     std::to_string(timed) + " (" + std::to_string(per_epoch) + " per epoch x --epochs " +
                     std::to_string(o.epochs) + (timed < per_epoch * o.epochs ? ", stopped by --max-steps" : "") + ")");
  }
}

std::optional<int64_t> samples_from_options(const TrainOptions& o) {
  if (o.data.samples > 0) return o.data.samples;
  if (o.data.kind == "synthetic") return kDefaultSyntheticSamples;
  return std::nullopt;
}

}  // namespace dpscale
