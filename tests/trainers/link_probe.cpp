// link_probe.cpp — times all-reduces through MpiCommunicator with a LinkModel, for
// test_dp_link.cpp. Not a benchmark: it answers "does one emulated all-reduce take at least the
// α-β model's time?" with the raw numbers, and checks the sums are right while it is at it.
//
// Run: mpirun -np K dp_link_probe LINK DILATION NBYTES REPS
// Rank 0 prints one JSON line on stdout:
//   {"k":K,"nbytes":B,"times_s":[...each blocking all-reduce...],"busy_s":S,"sums_ok":true}
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "contract/link_model.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_env.h"

int main(int argc, char** argv) {
  using namespace dpscale;
  MpiEnv env(&argc, &argv);
  if (argc != 5) {
    if (env.rank() == 0) std::cerr << "usage: dp_link_probe LINK DILATION NBYTES REPS" << std::endl;
    return 2;
  }
  LinkModel link = parse_link(argv[1]);
  link.dilation = std::atof(argv[2]);
  const size_t count = static_cast<size_t>(std::atoll(argv[3])) / sizeof(float);
  const int reps = std::atoi(argv[4]);
  const int k = env.world_size();

  std::vector<double> times;
  bool sums_ok = true;
  double busy = 0.0;
  {
    MpiCommunicator comm(MPI_COMM_WORLD, AllreduceAlgo::native, link);
    std::vector<float> buf(count);
    for (int r = 0; r < reps; ++r) {
      std::fill(buf.begin(), buf.end(), static_cast<float>(env.rank() + 1));
      MPI_Barrier(MPI_COMM_WORLD);  // all ranks start together
      const auto t0 = std::chrono::steady_clock::now();
      comm.allreduce_sum_blocking(buf.data(), buf.size());
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      const float want = static_cast<float>(k * (k + 1) / 2);  // 1 + 2 + ... + K
      for (float v : buf) sums_ok = sums_ok && v == want;
    }
    comm.finish();
    busy = comm.take_busy_seconds();
  }
  int ok = sums_ok ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (env.rank() == 0) {
    nlohmann::json j = {{"k", k}, {"nbytes", count * sizeof(float)}, {"times_s", times}, {"busy_s", busy},
                        {"sums_ok", all_ok == 1}};
    std::cout << j.dump() << std::endl;
  }
  return 0;
}
