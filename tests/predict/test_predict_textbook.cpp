// test_predict_textbook.cpp — `dpscale predict --textbook`: Output 15.9.1 and Output 15.2.1
// character for character at the book's inputs, and, at other inputs, every number against the
// book's formulas computed here independently (so a table that only memorised the book fails).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "book_outputs.h"
#include "harness/predict/textbook.h"
#include "tests/harness/harness_util.h"

namespace dpscale::test {
namespace {

using predict::Sim1521;
using predict::Sim1591;

TEST(Textbook1591, BookInputsGiveOutput1591Exactly) { EXPECT_EQ(predict::render_1591(Sim1591{}), kOutput1591); }

TEST(Textbook1521, BookInputsGiveOutput1521Exactly) { EXPECT_EQ(predict::render_1521(Sim1521{}), kOutput1521); }

TEST(Textbook1591, CommandPrintsTheBooksTable) {
  const ProcessResult r = dpscale({"predict", "--textbook", "15.9.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kOutput1591);
}

TEST(Textbook1521, CommandPrintsTheBooksLines) {
  const ProcessResult r = dpscale({"predict", "--textbook", "15.2.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kOutput1521);
}

// One row of Output 15.9.1 read back: K, five numbers, speedup (with its x), eff%, the label.
struct Parsed1591 {
  int k = 0;
  double compute = 0, comm = 0, load = 0, step = 0, speedup = 0, eff = 0;
  std::string label;
};

std::vector<Parsed1591> parse_1591(const std::string& text) {
  std::vector<Parsed1591> rows;
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 2; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    Parsed1591 p;
    std::string speedup;
    in >> p.k >> p.compute >> p.comm >> p.load >> p.step >> speedup >> p.eff;
    EXPECT_EQ(speedup.back(), 'x') << lines[i];
    p.speedup = std::stod(speedup.substr(0, speedup.size() - 1));
    std::getline(in, p.label);
    p.label = p.label.substr(p.label.find_first_not_of(' '));
    rows.push_back(p);
  }
  return rows;
}

TEST(Textbook1591, OtherInputsFollowTheBooksFormulas) {
  // Every input moved, K not a power of two, and a loader slow enough that K = 1 is
  // data-loading-bound while large K is communication-bound.
  const double P = 3.5e8, bytes = 4, B = 4096, fpe = 2.1e9, tflops = 100, net = 12.5, loader = 20000;
  const std::vector<int> ks = {1, 3, 8, 24};
  const ProcessResult r = dpscale({"predict", "--textbook", "15.9.1", "--params", "3.5e8", "--bytes-per-param", "4",
                                   "--global-batch", "4096", "--flops-per-example", "2.1e9", "--device-tflops", "100",
                                   "--net-gbps", "12.5", "--loader-samples-per-s", "20000", "--world-sizes", "1,3,8,24"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Parsed1591> rows = parse_1591(r.out);
  ASSERT_EQ(rows.size(), ks.size()) << r.out;
  auto step_of = [&](int k, double* c, double* m, double* l) {
    *c = B / k * fpe / (tflops * 1e12) * 1e3;
    *m = 2.0 * (k - 1) / k * P * bytes / (net * 1e9) * 1e3;
    *l = B / k / loader * 1e3;
    return *c + std::max(std::max(0.0, *m - *c), std::max(0.0, *l - *c));
  };
  double c, m, l;
  const double t1 = step_of(1, &c, &m, &l);
  std::vector<std::string> labels;
  for (size_t i = 0; i < ks.size(); ++i) {
    const int k = ks[i];
    const double step = step_of(k, &c, &m, &l);
    const Parsed1591& p = rows[i];
    EXPECT_EQ(p.k, k);
    EXPECT_NEAR(p.compute, c, 0.051) << k;
    EXPECT_NEAR(p.comm, m, 0.051) << k;
    EXPECT_NEAR(p.load, l, 0.051) << k;
    EXPECT_NEAR(p.step, step, 0.051) << k;
    EXPECT_NEAR(p.speedup, t1 / step, 0.051) << k;
    EXPECT_NEAR(p.eff, 100.0 * t1 / step / k, 0.51) << k;
    const double ec = std::max(0.0, m - c), el = std::max(0.0, l - c);
    const std::string want = ec == 0 && el == 0 ? "compute-bound (overlap wins)"
                             : ec >= el         ? "communication-bound"
                                                : "data-loading-bound";
    EXPECT_EQ(p.label, want) << k;
    labels.push_back(p.label);
  }
  // The case exercises more than one label (else the label check proves little).
  EXPECT_EQ(labels.front(), "data-loading-bound");
  EXPECT_EQ(labels.back(), "communication-bound");
}

TEST(Textbook1591, FlopsPerExampleDefaultsToSixTimesParams) {
  Sim1591 a, b;
  a.params = b.params = 2e9;
  b.flops_per_example = 12e9;
  EXPECT_EQ(predict::render_1591(a), predict::render_1591(b));
  b.flops_per_example = 13e9;  // negative control: a different value moves the compute column
  EXPECT_NE(predict::render_1591(a), predict::render_1591(b));
}

// The number after the colon of line `i`.
double number_on(const std::vector<std::string>& lines, size_t i) {
  const std::string& l = lines.at(i);
  return std::stod(l.substr(l.find(':') + 1));
}

TEST(Textbook1521, OtherInputsFollowTheBooksFormulas) {
  const double P = 3e8, bytes = 4, compute_s = 0.1;
  const int K = 16;
  const ProcessResult r = dpscale({"predict", "--textbook", "15.2.1", "--params", "3e8", "--bytes-per-param", "4",
                                   "--world-size", "16", "--compute-ms", "100", "--intra-link", "2:150",
                                   "--inter-link", "10:25"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ring = [&](double gbps, double lat_us) {
    const double hops = 2.0 * (K - 1), chunk = P * bytes / K;
    return hops * chunk / (gbps * 1e9) + hops * lat_us * 1e-6;
  };
  const double intra = ring(150, 2), inter = ring(25, 10);
  const double e_in = compute_s / (compute_s + intra), e_out = compute_s / (compute_s + inter);
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 9u) << r.out;
  EXPECT_EQ(lines[0], "model parameters        : 300,000,000");
  EXPECT_EQ(lines[1], "gradient payload (fp32) : 1.20 GB");
  EXPECT_EQ(lines[2], "compute per step        : 100 ms");
  EXPECT_NEAR(number_on(lines, 3), intra * 1e3, 0.0051);
  EXPECT_NE(lines[3].find("(NVSwitch ~150 GB/s)"), std::string::npos) << lines[3];
  EXPECT_NEAR(number_on(lines, 4), inter * 1e3, 0.0051);
  EXPECT_NE(lines[4].find("(InfiniBand ~25 GB/s)"), std::string::npos) << lines[4];
  EXPECT_NEAR(number_on(lines, 5), inter / intra, 0.051);
  EXPECT_NEAR(number_on(lines, 6), e_in * 100, 0.051);
  EXPECT_NEAR(number_on(lines, 7), e_out * 100, 0.051);
  EXPECT_NEAR(number_on(lines, 8), (e_in - e_out) * 100, 0.051);
}

TEST(Textbook, BadInputIsOneLineAndExitTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"predict", "--textbook", "15.9.2"},
        {"predict", "--textbook", "15.9.1", "--params", "-1"},
        {"predict", "--textbook", "15.9.1", "--world-sizes", "1,0"},
        {"predict", "--textbook", "15.2.1", "--world-size", "1"},
        {"predict", "--textbook", "15.2.1", "--intra-link", "fast"}}) {
    const ProcessResult r = dpscale(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.out << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace dpscale::test
