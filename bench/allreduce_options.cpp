// allreduce_options.cpp — parsing and validation of bench_allreduce's nccl-tests-like options.
#include "allreduce_options.h"

#include <algorithm>
#include <cctype>
#include <climits>

#include "bench_args.h"
#include "contract/link_model.h"
#include "core/errors.h"

namespace dpscale::bench {

size_t parse_size(const std::string& text, const std::string& what) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string suffix = text.substr(digits);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) digits = 0;  // junk after the number
  if (digits == 0 || digits > 15) {
    throw InputError(what + ": '" + text + "' is not a size (a number of bytes, optionally with K, M or G)");
  }
  const unsigned long long n = std::stoull(text.substr(0, digits));
  if (n > (1ULL << 40) >> shift) throw InputError(what + ": '" + text + "' is larger than 1 TiB");
  return static_cast<size_t>(n << shift);
}

namespace {

// The option table: every spelling of each option, and whether it takes a value.
enum class Arity { none, optional, required };
struct Spec {
  const char* short_name;  // "-b" or nullptr
  const char* long_name;   // "--minbytes"
  Arity arity;
};
constexpr Spec kSpecs[] = {
    {"-b", "--minbytes", Arity::required},    {"-e", "--maxbytes", Arity::required},
    {"-f", "--stepfactor", Arity::required},  {"-i", "--stepbytes", Arity::required},
    {"-n", "--iters", Arity::required},       {"-w", "--warmup_iters", Arity::required},
    {"-c", "--check", Arity::optional},       {nullptr, "--algos", Arity::required},
    {nullptr, "--link", Arity::required},     {"-h", "--help", Arity::none},
    {nullptr, "--predict", Arity::required},
    {nullptr, "--wait", Arity::required},
};

void apply(AllreduceBenchOptions& o, const Spec& s, const std::string& value, bool has_value) {
  const std::string name = s.long_name;
  if (name == "--minbytes") o.min_bytes = parse_size(value, "-b/--minbytes");
  else if (name == "--maxbytes") o.max_bytes = parse_size(value, "-e/--maxbytes");
  else if (name == "--stepfactor") o.factor = parse_int(value, "-f/--stepfactor", 2, 1 << 20);
  else if (name == "--stepbytes") o.step_bytes = parse_size(value, "-i/--stepbytes");
  else if (name == "--iters") o.iters = static_cast<int>(parse_int(value, "-n/--iters", 1, 1000000));
  else if (name == "--warmup_iters") o.warmup = static_cast<int>(parse_int(value, "-w/--warmup_iters", 0, 1000000));
  else if (name == "--check") o.check = !has_value || parse_int(value, "-c/--check", 0, 1) == 1;
  else if (name == "--algos") o.algos = split_list(value);
  else if (name == "--link") o.link = parse_link(value);
  else if (name == "--help") o.help = true;
  else if (name == "--predict") o.predict = parse_link(value);
  else if (name == "--wait") {
    if (value != "poll" && value != "block") throw InputError("--wait: unknown way '" + value + "' (use poll or block)");
    o.block_wait = value == "block";
  }
}

}  // namespace

AllreduceBenchOptions take_allreduce_options(int& argc, char** argv) {
  AllreduceBenchOptions o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const Spec* match = nullptr;
    std::string value;
    bool has_value = false;
    for (const Spec& s : kSpecs) {
      const std::string l = s.long_name;
      if (a == l || (s.short_name && a == s.short_name)) {
        match = &s;
      } else if (a.rfind(l + "=", 0) == 0) {
        match = &s, value = a.substr(l.size() + 1), has_value = true;
      } else if (s.short_name && a.size() > 2 && a.rfind(s.short_name, 0) == 0 && a[1] != '-') {
        match = &s, value = a.substr(2), has_value = true;  // "-b8"
      }
      if (match) break;
    }
    if (!match) {
      argv[out++] = argv[i];  // not ours: leave it for benchmark::Initialize
      continue;
    }
    if (!has_value && match->arity == Arity::optional) {
      // -c alone means "check"; "-c 0" / "-c 1" says so explicitly.
      if (i + 1 < argc && (std::string(argv[i + 1]) == "0" || std::string(argv[i + 1]) == "1")) {
        value = argv[++i], has_value = true;
      }
    } else if (!has_value && match->arity == Arity::required) {
      if (i + 1 >= argc || argv[i + 1][0] == '-') throw InputError(a + " needs a value");
      value = argv[++i], has_value = true;
    } else if (has_value && match->arity == Arity::none) {
      throw InputError(a + " takes no value");
    }
    apply(o, *match, value, has_value);
  }
  argc = out;
  argv[argc] = nullptr;

  if (o.help) return o;
  if (o.min_bytes < 4) throw InputError("-b/--minbytes: at least 4 bytes (one float) per message");
  if (o.max_bytes < o.min_bytes) throw InputError("-e/--maxbytes is smaller than -b/--minbytes");
  if (o.step_bytes == 0 && o.factor < 2) throw InputError("-f/--stepfactor must be at least 2");
  for (const std::string& a : o.algos) {
    if (a != "native" && a != "ring" && a != "star" && a != "hier" && a != "nccl") {
      throw InputError("--algos: unknown algorithm '" + a + "' (use native, ring, star, hier or nccl)");
    }
    if (a == "nccl" && o.link.enabled()) throw InputError("--link emulation applies to the MPI algorithms, not nccl");
  }
  return o;
}

std::vector<size_t> sweep_sizes(const AllreduceBenchOptions& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.min_bytes; s <= o.max_bytes;) {
    sizes.push_back(s / 4 * 4);
    const size_t next = o.step_bytes ? s + o.step_bytes : s * static_cast<size_t>(o.factor);
    if (next <= s) break;  // overflow guard
    s = next;
  }
  return sizes;
}

int iterations_for(const AllreduceBenchOptions& o, size_t nbytes) {
  if (o.iters > 0) return o.iters;
  const size_t by_volume = (size_t{256} << 20) / std::max<size_t>(nbytes, 1);
  return static_cast<int>(std::clamp<size_t>(by_volume, 5, 200));
}

int warmup_for(const AllreduceBenchOptions& o, size_t nbytes) {
  if (o.warmup >= 0) return o.warmup;
  return std::max(1, iterations_for(o, nbytes) / 20);
}

std::string allreduce_usage() {
  return "usage: mpirun -np K bench_allreduce [options] [--benchmark_* flags]\n"
         "  -b, --minbytes N      smallest message in bytes, K/M/G suffixes (default 8)\n"
         "  -e, --maxbytes N      largest message (default 256M)\n"
         "  -f, --stepfactor F    multiply the size by F each step (default 2)\n"
         "  -i, --stepbytes N     add N bytes each step instead\n"
         "  -n, --iters N         timed iterations per size (default: 256 MiB per size, 5..200)\n"
         "  -w, --warmup_iters N  untimed iterations per size (default: iters/20, at least 1)\n"
         "  -c, --check [0|1]     check every element of every result (default 0)\n"
         "  --algos LIST          native,ring,star,hier,nccl (default: all but hier that can run)\n"
         "  --link SPEC           hold each MPI all-reduce until its modelled α-β time (as the\n"
         "                        trainers' --link): none|" + link_preset_names("|") + "|ALPHA_US:GBPS\n"
         "  --predict SPEC        print each MPI measurement's α-β model time on this job's nodes\n"
         "                        (a one-tier link or intra=SPEC,inter=SPEC[,ranks-per-node=L])\n"
         "  --wait poll|block     MPI waits polled with backoff sleeps, as the trainers (default),\n"
         "                        or the library's blocking (spinning) calls\n"
         "Google Benchmark's own flags work too: --benchmark_filter=REGEX, --benchmark_format=json,\n"
         "--benchmark_out=FILE, --benchmark_repetitions=N (the table then shows medians).\n";
}

}  // namespace dpscale::bench
