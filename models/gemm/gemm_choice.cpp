// gemm_choice.cpp — --gemm auto (gemm_choice.h): check, time, pick, cache.
#include "gemm_choice.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <memory>
#include <stdexcept>
#include <thread>

#include "core/machine_fingerprint.h"
#include "gemm_accuracy.h"
#include "gemm_cache.h"
#include "gemm_library.h"
#include "gemm_probe.h"
#include "models/cpu/cpu_device.h"
#include "models/memory_check.h"

namespace dpscale {

namespace {

// A path under $HOME written "~/...": records are committed and shared, and the home directory
// says nothing about the run.
std::string home_relative(const std::string& path) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return path;
  const std::string prefix = std::string(home) + "/";
  return path.compare(0, prefix.size(), prefix) == 0 ? "~/" + path.substr(prefix.size()) : path;
}

std::string gflops_text(double g) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GFLOP/s", g);
  return buf;
}

// One of each (op, m, n, k, strides): layers that share a shape are checked once.
std::vector<GemmShape> distinct(const std::vector<GemmShape>& shapes) {
  std::vector<GemmShape> out;
  std::set<std::string> seen;
  for (const GemmShape& s : shapes) {
    if (seen.insert(s.call_key()).second) out.push_back(s);
  }
  return out;
}

// The first shape on which `lib` is off the reference, as a reason; "" when it is right on all.
std::string wrong_on(GemmLibrary& lib, const std::vector<GemmShape>& shapes) {
  for (const GemmShape& s : distinct(shapes)) {
    const GemmCheck c = check_gemm_library(lib, s);
    if (!c.ok) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3g", c.worst);
      std::string op = s.trans_a ? "T" : "N";
      op += s.trans_b ? "T" : "N";
      return "wrong results: " + op + " m " + std::to_string(s.m) + ", n " + std::to_string(s.n) + ", k " +
             std::to_string(s.k) + ", " + c.where + ", " + ratio + "x the fp32 bound against a float64 reference";
    }
  }
  return "";
}

nlohmann::json to_json(const std::vector<GemmCandidate>& cands, const std::string& chosen) {
  nlohmann::json list = nlohmann::json::array();
  for (const GemmCandidate& c : cands) {
    list.push_back({{"library", c.library}, {"kernel", c.kernel}, {"gflops", c.gflops}, {"passed_over", c.passed_over}});
  }
  return {{"library", chosen}, {"candidates", list}};
}

// An entry as gemm_choice wrote it, or nullopt when it is not one (the cache then measures again).
std::optional<GemmChoice> from_json(const nlohmann::json& e) {
  try {
    GemmChoice c;
    c.library = e.at("library").get<std::string>();
    bool chosen_listed = false;
    for (const nlohmann::json& x : e.at("candidates")) {
      GemmCandidate g{x.at("library").get<std::string>(), x.at("kernel").get<std::string>(), x.at("gflops").get<double>(),
                      x.at("passed_over").get<std::string>()};
      chosen_listed |= g.library == c.library && g.passed_over.empty();
      c.candidates.push_back(std::move(g));
    }
    if (!chosen_listed || gemm_library_missing(c.library) != "") return std::nullopt;
    return c;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Bytes the measurement holds at once: one set of operands per distinct GEMM (GemmPass) and the
// check's copies of the largest (its A, B, C and C's start).
double measurement_bytes(const std::vector<GemmShape>& shapes) {
  double pass = 0.0, check = 0.0;
  for (const GemmShape& s : distinct(shapes)) {
    const double floats = static_cast<double>(s.a_count()) + static_cast<double>(s.b_count()) + 2.0 * static_cast<double>(s.c_count());
    pass += floats - static_cast<double>(s.c_count());
    check = std::max(check, floats);
  }
  return 4.0 * (pass + check);
}

}  // namespace

std::string GemmChoice::passed_over() const {
  std::string out;
  for (const GemmCandidate& c : candidates) {
    if (c.passed_over.empty()) continue;
    out += (out.empty() ? "" : "; ") + c.library + ": " + c.passed_over;
  }
  return out;
}

size_t pick_fastest(std::vector<GemmCandidate>& cands) {
  size_t best = cands.size();
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!cands[i].passed_over.empty()) continue;
    // Ties go to the earlier library (OpenBLAS first): a choice needs a measured difference.
    if (best == cands.size() || cands[i].gflops > cands[best].gflops) best = i;
  }
  if (best == cands.size()) {
    std::string why;
    for (const GemmCandidate& c : cands) why += (why.empty() ? "" : "; ") + c.library + ": " + c.passed_over;
    throw std::runtime_error("--gemm auto: no GEMM library computes right on this machine (" + why + ")");
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    if (i == best || !cands[i].passed_over.empty()) continue;
    cands[i].passed_over = gflops_text(cands[i].gflops) + ", slower than " + cands[best].library + "'s " +
                           gflops_text(cands[best].gflops);
  }
  return best;
}

std::vector<GemmCandidate> measure_gemm_libraries(const std::vector<GemmShape>& shapes, int threads) {
  if (shapes.empty()) throw std::logic_error("measure_gemm_libraries: no shapes");
  std::vector<GemmCandidate> cands;
  std::vector<std::unique_ptr<GemmLibrary>> libs;
  for (const std::string& name : gemm_library_names()) {
    GemmCandidate c{name, "", 0.0, gemm_library_missing(name)};
    std::unique_ptr<GemmLibrary> lib;
    if (c.passed_over.empty()) {
      lib = make_gemm_library(name, threads);
      c.kernel = lib->info().kernel;
      c.passed_over = wrong_on(*lib, shapes);  // also the first, untimed pass of every shape
    }
    if (!c.passed_over.empty()) lib.reset();
    cands.push_back(std::move(c));
    libs.push_back(std::move(lib));
  }
  // Rounds that take the fit libraries in turn: at least 2, then on until each has had 0.5 s of
  // passes, at most 8. A library's turn is back-to-back passes for at least 20 ms (small models:
  // one pass is well under a millisecond, where a clock tick or an interrupt would decide); its
  // time per pass in its best turn counts.
  GemmPass pass(shapes);
  std::vector<double> best(cands.size(), 1e30), spent(cands.size(), 0.0);
  for (int round = 0; round < 8; ++round) {
    bool enough = round >= 2;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (!libs[i]) continue;
      double turn = 0.0;
      int passes = 0;
      do {
        turn += pass.seconds(*libs[i]);
        ++passes;
      } while (turn < 0.02);
      best[i] = std::min(best[i], turn / passes);
      spent[i] += turn;
      enough = enough && spent[i] >= 0.5;
    }
    if (enough) break;
  }
  for (size_t i = 0; i < cands.size(); ++i) {
    if (libs[i]) cands[i].gflops = pass.flops() / best[i] / 1e9;
  }
  return cands;
}

std::string gemm_choice_key(const std::vector<GemmShape>& shapes, int threads) {
  const MachineFingerprint machine{cpu_model_name(), static_cast<int>(std::thread::hardware_concurrency()), "", true};
  std::string key = machine.describe() + " | threads " + std::to_string(threads) + " |";
  for (const std::string& name : gemm_library_names()) {
    key += " " + name + "=";
    if (!gemm_library_missing(name).empty()) {
      key += "none";
      continue;
    }
    const GemmLibraryInfo info = make_gemm_library(name, threads)->info();
    key += info.kernel + (info.pinned.empty() ? "" : " [" + info.pinned + "]");
  }
  if (!gemm_test_hook().empty()) key += " | test hook broken=" + gemm_test_hook();
  key += " |";
  for (const GemmShape& s : shapes) {
    key += " ";
    key += s.trans_a ? "T" : "N";
    key += s.trans_b ? "T" : "N";
    key += std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  }
  return key;
}

GemmChoice choose_gemm(const std::vector<GemmShape>& shapes, int threads) {
  int built = 0;
  for (const std::string& name : gemm_library_names()) built += gemm_library_missing(name).empty();
  if (built == 1) {
    GemmChoice only{"openblas", "auto: the only library built in", {}};
    for (const std::string& name : gemm_library_names()) {
      if (name != "openblas") only.candidates.push_back({name, "", 0.0, gemm_library_missing(name)});
    }
    return only;
  }
  // A model too large for this machine is refused by the trainer's memory check, which comes after
  // the device is made: measuring its GEMMs first would exhaust memory instead.
  const double need = measurement_bytes(shapes), have = static_cast<double>(physical_memory_bytes());
  if (have > 0 && need > have / 4) {
    char gib[64];
    std::snprintf(gib, sizeof gib, "%.1f GiB", need / (1u << 30));
    return {"openblas", std::string("auto: not measured (the GEMMs' operands need ") + gib +
                            ", over a quarter of this machine's memory)", {}};
  }
  const std::string key = gemm_choice_key(shapes, threads);
  GemmCache cache(gemm_cache_path());
  std::string said;
  auto warn = [&] {
    if (cache.warning().empty() || cache.warning() == said) return;
    said = cache.warning();
    std::cerr << "# gemm: " << said << std::endl;
  };
  warn();
  if (const auto entry = cache.find(key)) {
    if (std::optional<GemmChoice> c = from_json(*entry)) {
      c->how = "auto: cached in " + home_relative(cache.path());
      return *c;
    }
  }
  GemmChoice c;
  c.candidates = measure_gemm_libraries(shapes, threads);
  c.library = c.candidates[pick_fastest(c.candidates)].library;
  c.how = "auto: measured";
  cache.store(key, to_json(c.candidates, c.library));
  warn();
  return c;
}

}  // namespace dpscale
