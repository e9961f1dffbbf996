// allreduce_options.h — bench_allreduce's own options, in nccl-tests' vocabulary:
//   -b, --minbytes N      smallest message (default 8; K/M/G suffixes, powers of 1024)
//   -e, --maxbytes N      largest message (default 256M)
//   -f, --stepfactor F    multiply the size by F each step (default 2)
//   -i, --stepbytes N     add N bytes each step instead of multiplying
//   -n, --iters N         timed iterations per size (default: by size, 5..200)
//   -w, --warmup_iters N  untimed iterations first (default: by size, 1..10)
//   -c, --check [0|1]     check every element of every result (default 0)
//   --algos LIST          native,ring,star[,nccl] (default: all that can run here)
//   --link SPEC           emulate a link as the trainers do (contract/link_model.h): each MPI
//                         all-reduce is held until its own pattern's α-β time has passed
//                         (none | nvlink | pcie4 | ib100 | eth10 | ALPHA_US:GBPS; default none)
//   --predict SPEC        print, beside each measurement, the α-β time the link
//                         model gives for it on this job's nodes (contract/link_model.h), without
//                         holding anything: for runs over a real (or tc-capped) link
//   --wait poll|block     how an MPI rank waits (comm/watchdog.h): poll, as the trainers do
//                         (MPI_Test with backoff sleeps; native = MPI_Iallreduce), or block, the
//                         library's spinning MPI_Allreduce / MPI_Waitall — to measure the difference
// They are taken out of argv before benchmark::Initialize, which then sees only its own flags.
// Sizes are bytes of float32 data: the element count is bytes / 4, rounded down.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "contract/link_model.h"

namespace dpscale::bench {

struct AllreduceBenchOptions {
  size_t min_bytes = 8;
  size_t max_bytes = size_t{256} << 20;
  long long factor = 2;
  size_t step_bytes = 0;  // 0: multiply by factor
  int iters = 0;          // 0: iterations_for() chooses by size
  int warmup = -1;        // -1: warmup_for() chooses by size
  bool check = false;
  std::vector<std::string> algos;  // empty: every algorithm available
  LinkModel link;                  // --link; name "none" when off
  LinkModel predict;               // --predict; name "none" when off
  bool block_wait = false;         // --wait block
  bool help = false;
};

// "8" -> 8, "1K" -> 1024, "256M" -> 268435456, "1G" -> 2^30 (case-insensitive suffix).
// InputError naming `what` for anything else (empty, negative, junk, overflow).
size_t parse_size(const std::string& text, const std::string& what);

// Takes our options out of argv (both "-b 8" and "-b8", "--minbytes 8" and "--minbytes=8").
// Validates them together: InputError for min < 4 bytes (less than one float), max < min,
// a factor < 2 without -i, zero or negative counts, an unknown algorithm or link, --link with
// nccl (NCCL runs over the real link).
AllreduceBenchOptions take_allreduce_options(int& argc, char** argv);

// The message sizes, min to max inclusive, each rounded down to whole floats.
std::vector<size_t> sweep_sizes(const AllreduceBenchOptions& o);

// Timed and untimed iterations for one size: -n / -w when given, else 256 MiB of data per
// size, clamped to 5..200 timed iterations, and a twentieth of that (at least 1) warm-up.
int iterations_for(const AllreduceBenchOptions& o, size_t nbytes);
int warmup_for(const AllreduceBenchOptions& o, size_t nbytes);

// The usage text (our options; the library's --benchmark_* flags are listed by --help too).
std::string allreduce_usage();

}  // namespace dpscale::bench
