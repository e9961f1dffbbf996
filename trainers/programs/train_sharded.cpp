// train_sharded.cpp — sharded data-parallel (ZeRO stages 1 and 2): each rank updates its shard of
// the parameters and keeps optimizer state for it alone; the shards are all-gathered.
// Run: mpirun -np 2 train_sharded --model large --shard-stage 2 --optimizer adamw --link pcie4
// The loop is shared (trainers/train_loop.cpp); only the GradSync strategy differs (trainers/sync_sharded.cpp).
#include "trainer_main.h"

int main(int argc, char** argv) { return dpscale::run_trainer(argc, argv, dpscale::Mode::sharded); }
