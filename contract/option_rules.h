// option_rules.h — the rules between options that no single option's parser can check (each
// value is fine alone; together a trainer refuses them). Written once: the trainers apply them
// in their local set-up, `dpscale sweep` to every run a config expands to, before any runs.
#pragma once

#include <cstdint>
#include <optional>

#include "contract/trainer_options.h"

namespace dpscale {

// InputError in the trainers' words when `o` cannot run on `world_size` ranks: 2-byte
// gradients with --allreduce hier (hier's node phases sum 4- and 8-byte types only), a
// two-tier --link whose ranks-per-node does not divide the ranks into whole nodes, --share-gpu
// where there is no GPU to share (--backend cpu) or with hier (an MPI algorithm: NCCL's ranks
// share the GPU).
void check_option_rules(const TrainOptions& o, int world_size);

// InputError in the trainers' words when `o` sets an option of the other kind of model than its
// --model: --seq-len, --tokens or --text with an MLP, --features or --labels with a transformer
// (the trainer would otherwise ignore it). A sweep that mixes MLPs and transformers under one
// `options` block is refused by this before anything runs.
void check_model_options(const TrainOptions& o);

// InputError for diagnosis options this job cannot take on this backend and machine (an
// --inject-delay rank that does not exist, a slower link off MPI). The trainers call it in the
// local set-up, before the first collective. (A --trace path that cannot be written is refused
// as the option is parsed: TrainerOption::check_path.)
void check_diagnosis_options(const TrainOptions& o, int world_size, Backend backend);

// InputError in the trainers' words when the run's steps do not fit its `n_samples` training
// samples: a global batch larger than them, --accum-steps x --batch-size rows per optimizer step
// more than them, or (with --trace) a --trace-steps range past the run's last timed step.
void check_data_rules(const TrainOptions& o, int64_t n_samples);

// The training samples a run will have, as far as its options tell without reading a file:
// synthetic data's (--samples, else its default); a file's --samples when given. nullopt when
// only the file knows (fashion-mnist or npy without --samples).
std::optional<int64_t> samples_from_options(const TrainOptions& o);

}  // namespace dpscale
