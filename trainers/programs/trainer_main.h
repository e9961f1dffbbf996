// trainer_main.h — main() of all four trainers: one flow over a World (comm/world.h).
//
// train_single_gpu runs in a world of one, without MPI. The data-parallel trainers must be
// started by mpirun, one rank per device:
//   1. every rank sets itself up alone (options, device, data, weights) — no collectives yet;
//   2. one all-gather of (error code, weight checksum, options fingerprint): if any rank failed,
//      the first failing rank prints its one line and all exit with its status; if replicas
//      differ, rank 0 says so and all exit 2. Nobody is left waiting in a collective;
//   3. communicator, training, results gathered on rank 0, which prints RESULTS_JSON.
// Started without mpirun, a data-parallel trainer still parses its options first, so a bad one
// is named (exit 2) before it says it needs mpirun: every option is checked without MPI.
// After step 2 an error that is the same on every rank (a non-finite global loss) exits 2
// cleanly; anything else ends the whole job (World::end_job: MPI_Abort), not one rank.
#pragma once

#include "contract/modes.h"

namespace dpscale {

int run_trainer(int argc, char** argv, Mode mode);

}  // namespace dpscale
