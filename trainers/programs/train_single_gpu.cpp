// train_single_gpu.cpp — the single-device baseline: forward, backward, SGD; no communication.
// Run: train_single_gpu --model medium --epochs 5
// The loop is shared (trainers/train_loop.cpp); only the GradSync strategy differs (trainers/grad_sync.h).
#include "trainer_main.h"

int main(int argc, char** argv) { return dpscale::run_trainer(argc, argv, dpscale::Mode::single); }
