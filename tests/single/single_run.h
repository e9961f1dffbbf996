// single_run.h — run the built train_single_gpu as a child process and judge its exit.
//
// A bad input must exit with status 2 (not a signal, not a timeout), print nothing on stdout,
// and print exactly one line on stderr, "train_single_gpu: <what is wrong>". Errors found after
// training has started follow the banner ("# ..." lines) with that one line.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/common/subprocess.h"

namespace dpscale::test {

// The build's bin/, or $DPSCALE_BIN_DIR when set: the GPU kit runs these tests from its own bin/,
// where the build's path does not exist.
inline std::string trainer_path() {
  const char* dir = getenv("DPSCALE_BIN_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : DPSCALE_BIN_DIR) + "/train_single_gpu";
}

inline ProcessResult run_trainer(const std::vector<std::string>& args, double timeout_s = 120) {
  std::vector<std::string> argv = {trainer_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions opts;
  opts.timeout_s = timeout_s;
  opts.env = {"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"};
  return run_process(argv, opts);
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// Exit 2, no stdout, and exactly one non-banner line on stderr that names the problem
// (contains every needle). `banner_allowed`: the error came after training began.
inline void expect_bad_input(const ProcessResult& r, const std::vector<std::string>& needles,
                             bool banner_allowed = false) {
  ASSERT_FALSE(r.spawn_failed) << "could not run " << trainer_path();
  ASSERT_FALSE(r.timed_out) << "hung; stderr:\n" << r.err;
  ASSERT_EQ(r.term_signal, 0) << "crashed with signal " << r.term_signal << "; stderr:\n" << r.err;
  EXPECT_EQ(r.exit_code, 2) << "stderr:\n" << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout for a failed run";
  std::vector<std::string> msgs;
  for (const std::string& l : lines_of(r.err)) {
    if (banner_allowed && l.rfind("#", 0) == 0) continue;
    msgs.push_back(l);
  }
  ASSERT_EQ(msgs.size(), 1u) << "want one line on stderr, got:\n" << r.err;
  const std::string& m = msgs[0];
  EXPECT_EQ(m.rfind("train_single_gpu: ", 0), 0u) << m;
  EXPECT_EQ(m.find("error:"), std::string::npos) << "an internal error, not a bad-input message: " << m;
  for (const std::string& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "'" << n << "' not in: " << m;
}

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpscale-single-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::set<std::string> entries(const std::string& sub = "") const {
    std::set<std::string> s;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / sub)) s.insert(e.path().filename().string());
    return s;
  }
  std::filesystem::path dir_;
};

// Small, fast arguments that train successfully. `set` replaces a default's value (or adds an
// option; the value "-" drops the option), so a test changes exactly one thing.
inline std::vector<std::string> tiny_run(const std::map<std::string, std::string>& set = {}) {
  const std::vector<std::pair<std::string, std::string>> defaults = {
      {"--backend", "cpu"}, {"--model", "784,8,10"}, {"--samples", "128"},
      {"--batch-size", "32"}, {"--epochs", "1"},     {"--warmup-steps", "1"}};
  std::vector<std::string> a = {"--quiet"};
  for (const auto& [k, v] : defaults) {
    auto it = set.find(k);
    const std::string value = it == set.end() ? v : it->second;
    if (value == "-") continue;
    a.push_back(k);
    a.push_back(value);
  }
  for (const auto& [k, v] : set) {
    bool is_default = false;
    for (const auto& d : defaults) is_default |= d.first == k;
    if (is_default) continue;
    a.push_back(k);
    if (!v.empty()) a.push_back(v);  // "" = a flag without a value
  }
  return a;
}

}  // namespace dpscale::test
