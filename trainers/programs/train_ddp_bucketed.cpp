// train_ddp_bucketed.cpp — DDP-style data-parallel: capped gradient buckets, each reduced async when complete.
// Run: mpirun -np 2 train_ddp_bucketed --model medium --link pcie4 --link-dilation auto:19.5
// The loop is shared (trainers/train_loop.cpp); only the GradSync strategy differs (trainers/grad_sync.h).
#include "trainer_main.h"

int main(int argc, char** argv) { return dpscale::run_trainer(argc, argv, dpscale::Mode::bucketed); }
