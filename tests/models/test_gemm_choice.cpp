// test_gemm_choice.cpp — --gemm auto: the fastest right library is chosen, a fast wrong one never
// is, and the choice is kept per machine in a cache that survives a corrupt file.
//
// The negative control is a real library made fast and wrong by DPSCALE_TEST_GEMM_BROKEN (its
// calls return at once): it would win any race, so a choice that skipped the float64 check would
// pick it. Tests that need two libraries skip, with the reason, where only one is built in.
//   ctest -R '^ModelsGemmChoice'
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/gemm/gemm_cache.h"
#include "models/gemm/gemm_choice.h"
#include "models/gemm/gemm_library.h"
#include "models/gemm/step_gemms.h"

namespace dpscale {
namespace {

TEST(ModelsGemmChoicePick, FastestFitWinsAndEveryOtherSaysWhy) {
  std::vector<GemmCandidate> c = {{"openblas", "k1", 50.0, ""},
                                  {"blis", "k2", 900.0, "wrong results: NT m 4, n 4, k 4, ..."},
                                  {"onednn", "k3", 60.0, ""}};
  EXPECT_EQ(pick_fastest(c), 2u);
  EXPECT_EQ(c[2].passed_over, "");
  EXPECT_EQ(c[0].passed_over, "50.0 GFLOP/s, slower than onednn's 60.0 GFLOP/s");
  EXPECT_EQ(c[1].passed_over, "wrong results: NT m 4, n 4, k 4, ...");  // the fastest, and wrong
  const GemmChoice choice{"onednn", "auto: measured", c};
  EXPECT_EQ(choice.passed_over(),
            "openblas: 50.0 GFLOP/s, slower than onednn's 60.0 GFLOP/s; blis: wrong results: NT m 4, n 4, k 4, ...");
}

TEST(ModelsGemmChoicePick, TiesGoToTheEarlierLibrary) {
  std::vector<GemmCandidate> c = {{"openblas", "", 60.0, ""}, {"blis", "", 60.0, ""}};
  EXPECT_EQ(pick_fastest(c), 0u);
}

TEST(ModelsGemmChoicePick, NoFitLibraryIsAnErrorNamingEachReason) {
  std::vector<GemmCandidate> c = {{"openblas", "", 0.0, "wrong results: x"}, {"blis", "", 0.0, "not built in"}};
  try {
    pick_fastest(c);
    FAIL() << "a choice among wrong libraries";
  } catch (const std::runtime_error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("openblas: wrong results: x"), std::string::npos) << w;
    EXPECT_NE(w.find("blis: not built in"), std::string::npos) << w;
  }
}

int libraries_built() {
  int n = 0;
  for (const std::string& name : gemm_library_names()) n += gemm_library_missing(name).empty();
  return n;
}

// A cache file of its own per test, and no test hook left behind.
class ModelsGemmChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("dpscale-gemm-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    cache_ = (dir_ / "sub" / "choice.json").string();
    setenv("DPSCALE_GEMM_CACHE", cache_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("DPSCALE_TEST_GEMM_BROKEN");
    unsetenv("DPSCALE_GEMM_CACHE");
    std::filesystem::remove_all(dir_);
  }
  // A small step: quick to measure, several distinct shapes.
  std::vector<GemmShape> shapes() const { return training_step_gemms(parse_model("784,128,64,10"), 64); }
  std::filesystem::path dir_;
  std::string cache_;
};

TEST_F(ModelsGemmChoice, AFastWrongLibraryIsPassedOverWithItsReason) {
  if (libraries_built() < 2) GTEST_SKIP() << "one GEMM library built in: nothing to choose between";
  for (const std::string& broken : gemm_library_names()) {
    if (!gemm_library_missing(broken).empty()) continue;
    setenv("DPSCALE_TEST_GEMM_BROKEN", broken.c_str(), 1);
    const GemmChoice c = choose_gemm(shapes(), 1);
    EXPECT_NE(c.library, broken) << "the broken library was chosen";
    EXPECT_EQ(c.how, "auto: measured");
    const std::string why = c.passed_over();
    EXPECT_NE(why.find(broken + ": wrong results"), std::string::npos) << why;
    EXPECT_NE(why.find("float64 reference"), std::string::npos) << why;
    for (const GemmCandidate& k : c.candidates) {
      if (k.library == c.library) {
        EXPECT_GT(k.gflops, 0.0);
      } else {
        EXPECT_FALSE(k.passed_over.empty()) << k.library;
      }
    }
  }
}

TEST_F(ModelsGemmChoice, MeasuredOnceThenCachedUnderTheMachineAndShapes) {
  if (libraries_built() < 2) GTEST_SKIP() << "one GEMM library built in: auto measures nothing";
  const GemmChoice first = choose_gemm(shapes(), 1);
  EXPECT_EQ(first.how, "auto: measured");
  const GemmChoice again = choose_gemm(shapes(), 1);
  EXPECT_EQ(again.how, "auto: cached in " + cache_);
  EXPECT_EQ(again.library, first.library);
  EXPECT_EQ(again.passed_over(), first.passed_over());
  // Other shapes, other threads, a test hook: other keys, measured afresh.
  EXPECT_EQ(choose_gemm(training_step_gemms(parse_model("784,128,64,10"), 32), 1).how, "auto: measured");
  EXPECT_EQ(choose_gemm(shapes(), 2).how, "auto: measured");
  setenv("DPSCALE_TEST_GEMM_BROKEN", first.library.c_str(), 1);
  const GemmChoice hooked = choose_gemm(shapes(), 1);
  EXPECT_EQ(hooked.how, "auto: measured");
  EXPECT_NE(hooked.library, first.library);
  unsetenv("DPSCALE_TEST_GEMM_BROKEN");
  // ... and the hooked choice never reaches a run without the hook.
  EXPECT_EQ(choose_gemm(shapes(), 1).library, first.library);
  // The key names the machine as the sweep's fingerprint does, and the shapes.
  const std::string key = gemm_choice_key(shapes(), 1);
  EXPECT_NE(key.find(" CPUs, no GPU | threads 1 |"), std::string::npos) << key;
  EXPECT_NE(key.find("NT64x128x784"), std::string::npos) << key;
  std::ifstream in(cache_);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc.at("schema"), "dpscale.gemm-choice/1");
  EXPECT_EQ(doc.at("entries").at(key).at("library"), first.library);
}

TEST_F(ModelsGemmChoice, ACorruptCacheIsIgnoredAndRewritten) {
  if (libraries_built() < 2) GTEST_SKIP() << "one GEMM library built in: auto reads no cache";
  for (const std::string& junk : {std::string("{\"schema\": \"dpscale.gemm-choice/1\", \"entr"), std::string("[1, 2]"),
                                 std::string("{\"schema\": \"dpscale.gemm-choice/1\", \"entries\": {\"K\": 3}}")}) {
    std::filesystem::create_directories(std::filesystem::path(cache_).parent_path());
    std::ofstream(cache_) << junk;
    testing::internal::CaptureStderr();
    const GemmChoice c = choose_gemm(shapes(), 1);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(c.how, "auto: measured") << junk;
    std::ifstream in(cache_);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << "not rewritten as JSON after: " << junk;
    EXPECT_EQ(doc.at("entries").at(gemm_choice_key(shapes(), 1)).at("library"), c.library);
    if (junk.find("entries\": {") == std::string::npos) {
      EXPECT_NE(err.find("# gemm: ignored " + cache_), std::string::npos) << err;
    }
  }
  // An entry of the right key but the wrong content is measured again, not trusted.
  nlohmann::json doc = {{"schema", "dpscale.gemm-choice/1"},
                        {"entries", {{gemm_choice_key(shapes(), 1), {{"library", "nonsense"}, {"candidates", 7}}}}}};
  std::ofstream(cache_) << doc.dump();
  EXPECT_EQ(choose_gemm(shapes(), 1).how, "auto: measured");
}

// GEMMs whose operands would not fit are not measured (the trainer's memory check, after the
// device is made, then refuses the model by name): nothing is allocated, nothing cached.
TEST_F(ModelsGemmChoice, GemmsBeyondMemoryAreNotMeasured) {
  if (libraries_built() < 2) GTEST_SKIP() << "one GEMM library built in: auto measures nothing";
  const int big = 1 << 20;
  const GemmShape huge{0, GemmKind::forward, false, true, big, big, 1 << 16, 1 << 16, 1 << 16, big};  // 4 TiB of C
  const GemmChoice c = choose_gemm({huge}, 1);
  EXPECT_EQ(c.library, "openblas");
  EXPECT_EQ(c.how.rfind("auto: not measured (the GEMMs' operands need ", 0), 0u) << c.how;
  EXPECT_FALSE(std::filesystem::exists(cache_));
}

TEST_F(ModelsGemmChoice, NoCacheLocationMeansMeasuringEveryTime) {
  if (libraries_built() < 2) GTEST_SKIP() << "one GEMM library built in: auto measures nothing";
  unsetenv("DPSCALE_GEMM_CACHE");
  const char* home = getenv("HOME");
  const char* xdg = getenv("XDG_CACHE_HOME");
  const std::string saved_home = home ? home : "", saved_xdg = xdg ? xdg : "";
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(gemm_cache_path(), "");
  EXPECT_EQ(choose_gemm(shapes(), 1).how, "auto: measured");
  EXPECT_EQ(choose_gemm(shapes(), 1).how, "auto: measured");
  setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(gemm_cache_path(), "/x/dpscale/gemm-choice.json");
  unsetenv("XDG_CACHE_HOME");
  if (!saved_home.empty()) setenv("HOME", saved_home.c_str(), 1);
  if (!saved_xdg.empty()) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

}  // namespace
}  // namespace dpscale
