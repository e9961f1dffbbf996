// bench_args.cpp — argv surgery and small parsers shared by the micro-benchmarks.
#include "bench_args.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"

namespace dpscale::bench {

namespace {
// Removes argv[i .. i+n) and keeps argv[argc] == nullptr.
void erase_args(int& argc, char** argv, int i, int n) {
  for (int j = i; j + n <= argc; ++j) argv[j] = argv[j + n];
  argc -= n;
}
}  // namespace

std::optional<std::string> take_flag(int& argc, char** argv, const std::string& name) {
  std::optional<std::string> value;
  const std::string eq = name + "=";
  for (int i = 1; i < argc;) {
    const std::string a = argv[i];
    if (a.rfind(eq, 0) == 0) {
      value = a.substr(eq.size());
      erase_args(argc, argv, i, 1);
    } else if (a == name) {
      if (i + 1 >= argc) throw InputError(name + " needs a value");
      value = std::string(argv[i + 1]);
      erase_args(argc, argv, i, 2);
    } else {
      ++i;
    }
  }
  return value;
}

bool take_switch(int& argc, char** argv, const std::string& name) {
  bool seen = false;
  for (int i = 1; i < argc;) {
    if (argv[i] == name) {
      erase_args(argc, argv, i, 1);
      seen = true;
    } else {
      ++i;
    }
  }
  return seen;
}

int drop_flags(int& argc, char** argv, const std::string& prefix) {
  int removed = 0;
  for (int i = 1; i < argc;) {
    const std::string a = argv[i];
    if (a.rfind(prefix, 0) == 0) {  // the library only takes the "--flag=value" form
      erase_args(argc, argv, i, 1);
      ++removed;
    } else {
      ++i;
    }
  }
  return removed;
}

std::string benchmark_format(int argc, char** argv) {
  std::string fmt = "console";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--benchmark_format=", 0) == 0) fmt = a.substr(std::strlen("--benchmark_format="));
  }
  return fmt;
}

long long parse_int(const std::string& text, const std::string& what, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || v < lo || v > hi) {
    throw InputError(what + ": '" + text + "' is not an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  }
  return v;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

MedianInterval median_interval(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size()), half = 1.96 * std::sqrt(n);
  const auto j = static_cast<long long>(std::floor((n - half) / 2.0));
  const auto k = static_cast<long long>(std::ceil(1.0 + (n + half) / 2.0));
  const auto at = [&](long long rank) { return v[static_cast<size_t>(std::clamp<long long>(rank, 1, static_cast<long long>(v.size())) - 1)]; };
  return {at(j), at(k)};
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int run_guarded(const char* name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    return 1;
  }
}

}  // namespace dpscale::bench
