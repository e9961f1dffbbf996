// train_dp_interleaved.cpp — interleaved data-parallel: an async all-reduce per tensor, fired from backward.
// Run: mpirun -np 2 train_dp_interleaved --model medium --link pcie4 --link-dilation auto:19.5
// The loop is shared (trainers/train_loop.cpp); only the GradSync strategy differs (trainers/grad_sync.h).
#include "trainer_main.h"

int main(int argc, char** argv) { return dpscale::run_trainer(argc, argv, dpscale::Mode::interleaved); }
