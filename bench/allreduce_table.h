// allreduce_table.h — bench_allreduce's human-readable table, in the manner of nccl-tests:
// every non-data line starts with '#', one row per message size, one column group per
// algorithm, and a closing "# Avg bus bandwidth" line. Rank 0 fills and prints it; the same
// numbers go to the library's reporters as counters (and so to --benchmark_format=json).
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace dpscale::bench {

struct AllreduceMeasurement {
  size_t nbytes = 0;
  size_t count = 0;           // float32 elements
  double seconds = 0.0;       // mean over iterations of the per-iteration max over ranks
  double rank0_sent = 0.0;    // bytes rank 0 sends per all-reduce (contract/allreduce_algo.h)
  long long wrong = -1;       // elements that failed the check, summed over ranks; -1: not checked
};

class AllreduceTable {
 public:
  AllreduceTable(int nranks, std::vector<std::string> algos) : k_(nranks), algos_(std::move(algos)) {}

  // One run of one (algorithm, size). Repeated runs (--benchmark_repetitions) are combined:
  // the median time, the worst check.
  void add(const std::string& algo, const AllreduceMeasurement& m);
  bool empty() const { return runs_.empty(); }

  // Column header, one row per size measured, then the summary lines. `banner` lines (already
  // '#'-prefixed) go first.
  void print(std::FILE* out, const std::vector<std::string>& banner) const;

  // Mean busbw over the sizes measured for `algo` (GB/s); 0 when none.
  double avg_busbw(const std::string& algo) const;
  // One '#'-line per (algorithm, size) whose busbw is below half of the best busbw of that
  // algorithm at any smaller size: a bandwidth collapse (as Open MPI's native all-reduce showed
  // from 32 MiB up before comm/heap_policy.h). print() puts them after the rows.
  std::vector<std::string> collapse_warnings() const;
  long long total_wrong() const;  // over every checked run; 0 when nothing was checked

 private:
  AllreduceMeasurement combined(const std::string& algo, size_t nbytes) const;
  int k_;
  std::vector<std::string> algos_;
  std::map<std::pair<std::string, size_t>, std::vector<AllreduceMeasurement>> runs_;
};

}  // namespace dpscale::bench
