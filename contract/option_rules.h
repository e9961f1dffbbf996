// option_rules.h — the rules between options that no single option's parser can check (each
// value is fine alone; together a trainer refuses them). Written once: the trainers apply them
// in their local set-up, `dpscale sweep` to every run a config expands to, before any runs.
#pragma once

#include "contract/trainer_options.h"

namespace dpscale {

// InputError in the trainers' words when `o` cannot run on `world_size` ranks: 2-byte
// gradients with --allreduce hier (hier's node phases sum 4- and 8-byte types only), a
// two-tier --link whose ranks-per-node does not divide the ranks into whole nodes, --share-gpu
// where there is no GPU to share (--backend cpu) or with hier (an MPI algorithm: NCCL's ranks
// share the GPU).
void check_option_rules(const TrainOptions& o, int world_size);

// InputError for diagnosis options this job cannot take on this backend and machine (an
// --inject-delay rank that does not exist, a slower link off MPI, a --trace directory that does
// not exist). The trainers call it in the local set-up, before the first collective.
void check_diagnosis_options(const TrainOptions& o, int world_size, Backend backend);

}  // namespace dpscale
