// triad.h — the exposure triad of --triad N, after the timed epochs, in one process:
//
//   full          N ordinary steps (forward, loss, backward with the strategy's all-reduces,
//                 finish, SGD)
//   compute-only  N of the same steps with every all-reduce skipped (backward tells no one its
//                 gradients: DDP's no-op comm hook)
//   comm-only     N steps of the strategy's all-reduces alone: begin_step, on_grad_ready for
//                 every tensor in backward order, finish — the same calls, sizes, order and
//                 link emulation, no compute (the gradients are zeroed first so repeated sums
//                 stay finite)
//
// Each phase starts at a barrier; its time is the slowest rank's, host clock around N steps and
// one device synchronisation at the end (as nccl-tests times N launches). The weights are saved
// before and restored after, so the run's result is unchanged.
//
//   exposed = full − compute_only      overlap = 100·max(0, min(1, 1 − exposed / comm_only))
// (OSU's overlap formula.)
#pragma once

#include <optional>

#include "comm/communicator.h"
#include "comm/world.h"
#include "trainers/grad_sync.h"
#include "trainers/rank_setup.h"

namespace dpscale {

struct TriadResult {
  int steps = 0;
  double full_s = 0.0, compute_only_s = 0.0, comm_only_s = 0.0;  // per step
  double exposed_s() const { return full_s - compute_only_s; }
  std::optional<double> overlap_pct() const;
};

// Collective: every rank calls it with the same n (> 0).
TriadResult run_triad(RankSetup& s, GradSync& sync, Communicator& comm, World& world, int n);

}  // namespace dpscale
