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
// N rounds, each one step of every phase, the phases' order turned one place a round (full,
// compute-only, comm-only; then compute-only, comm-only, full; ...): a load that comes and goes
// lands on the three phases alike, not on one phase's block of steps. Each step starts at a
// barrier with every device idle and ends at a device synchronisation; its time is the slowest
// rank's host clock; a phase's time is the median of its N steps. The weights are saved before
// and restored after, so the run's result is unchanged.
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
