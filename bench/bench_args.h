// bench_args.h — what every micro-benchmark main() shares: our own --name=value flags taken out
// of argv before benchmark::Initialize sees it (so the library's flags — --benchmark_filter,
// --benchmark_format, --benchmark_out, --benchmark_repetitions ... — work unchanged and
// anything neither side knows is still reported as unrecognised), and a reporter that prints
// nothing (for ranks other than 0 in bench_allreduce).
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dpscale::bench {

// Removes "--name=value" or "--name value" from argv and returns the value; nullopt if absent.
// The last occurrence wins. InputError when "--name" is the last argument (no value).
std::optional<std::string> take_flag(int& argc, char** argv, const std::string& name);

// Removes every "--name" (a switch: no value) from argv; whether there was one.
bool take_switch(int& argc, char** argv, const std::string& name);

// Removes every argument starting with `prefix` (e.g. "--benchmark_out", which also catches
// --benchmark_out_format; the library only takes the "--flag=value" form). Returns the count.
int drop_flags(int& argc, char** argv, const std::string& prefix);

// The value of --benchmark_format (console when absent), read without consuming it.
std::string benchmark_format(int argc, char** argv);

// Strict parsers for our own flags: the whole text must be a number in [lo, hi]; InputError
// naming `what` otherwise.
long long parse_int(const std::string& text, const std::string& what, long long lo, long long hi);
std::vector<std::string> split_list(const std::string& text);  // "a,b,c" -> {a, b, c}

// A distribution-free 95% interval of the median of a non-empty sample: its order statistics
// x(j) and x(k) (1-based), j = floor((n − 1.96·√n) / 2), k = ceil(1 + (n + 1.96·√n) / 2), within
// [1, n] — the binomial's normal approximation (a little wide for small n; n = 100: x(40), x(61)).
struct MedianInterval {
  double lo, hi;
};
MedianInterval median_interval(std::vector<double> v);

// Reports nothing and never fails: what ranks other than 0 hand to RunSpecifiedBenchmarks.
class NullReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Runs a benchmark program's body with the project's error convention: an InputError is one
// line "<name>: <message>" and exit 2, any other exception "<name>: error: ..." and exit 1.
int run_guarded(const char* name, const std::function<int()>& body);

// Cores this process may run on (sched_getaffinity), at least 1.
int usable_cores();

}  // namespace dpscale::bench
