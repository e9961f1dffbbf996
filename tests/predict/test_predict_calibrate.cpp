// test_predict_calibrate.cpp — `dpscale predict --calibrate`: each machine term is recovered from
// synthetic records made with known terms, the fit never scores a point it fitted, predict's
// all-reduce time is the link emulation's (the same function), the cap check counts the cells
// that hold, and a calibration from a file without a single run, with a failed or disturbed run,
// or of two machines is refused with exit status 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/predict/cap_check.h"
#include "harness/predict/machine_fit.h"
#include "harness/predict/validate.h"
#include "tests/harness/harness_util.h"

namespace dpscale::test {
namespace {

using predict::MachineTerms;

// φ0 1 ms, φ1 0.5 ns per parameter, σ 0.8 ms/MiB, o 300 µs, 2 cores of 1 thread each.
const MachineTerms kTrue{1e-3, 0.5e-9, 0.8e-3, 300e-6, 2, 1};

struct Machine {
  std::string cpu = "Test CPU";
  int cpus = 2;
  std::optional<std::string> disturbed;
};

predict::SingleRun single_of(const std::string& model, double epoch_s) {
  return predict::SingleRun{parse_model_spec(model, 0), epoch_s, 8192, 1024};
}

// A record of `p` whose times are the step model's with `terms` (so calibration must give them back).
RunRecord modelled_record(const SweepRun& p, const predict::SingleRun& s, const MachineTerms& terms, int n_nodes = 1) {
  RunRecord r = make_record(p, 1.0);
  r.widths = s.spec.widths;
  r.n_samples = 8192;
  r.steps_per_epoch = 8;
  r.n_nodes = n_nodes;
  if (p.point.mode == Mode::single) {
    r.avg_epoch_s = r.compute_s = s.epoch_s;
    return r;
  }
  r.allreduce = "native";
  r.link = p.point.link();
  r.link_alpha_us = 50;
  r.link_gbps = 300;
  r.link_dilation = 150;
  r.bucket_cap_mb = p.point.bucket_cap_mb();
  const predict::EpochPrediction e = predict::predict_recorded(s, r, terms);
  r.avg_epoch_s = e.epoch_s;
  r.compute_s = e.compute_s;
  r.comm_busy_s = e.busy_s;
  if (p.point.mode == Mode::naive) r.comm_s = e.naive_comm_s;
  else r.exposed_comm_s = e.exposed_s;
  r.allreduce_calls_per_step = e.calls_per_step;
  return r;
}

std::string line(const SweepRun& p, const std::optional<RunRecord>& r, const Machine& m = {}, const std::string& reason = "") {
  RunInfo info;
  info.config = "synthetic";
  info.run_id = p.run_id("synthetic");
  info.argv = test::argv_of(p);
  info.host = "testhost";
  nlohmann::ordered_json system = {{"host", "testhost"}, {"cpu_model", m.cpu}, {"cpu_count", m.cpus}, {"gpu_model", nullptr}};
  if (m.disturbed) {
    MachineState st;
    st.disturbed = m.disturbed;
    system["state"] = to_json(st);
  }
  return make_sweep_line(p.point, p.repeat, info, system, r, reason).dump() + "\n";
}

// small and medium: singles, naive and interleaved at K = 2 (the fit), bucketed at K = 2 and
// every mode at K = 4 (held out), all made with the true terms.
std::string synthetic_sweep(const MachineTerms& terms) {
  std::string text;
  for (const auto& [model, t1] : std::vector<std::pair<std::string, double>>{{"small", 0.5}, {"medium", 3.2}}) {
    const predict::SingleRun s = single_of(model, t1);
    text += line(pt(model, "single", 1), modelled_record(pt(model, "single", 1), s, terms));
    for (int k : {2, 4}) {
      for (const SweepRun& p : {pt(model, "naive", k, std::nullopt, "50:300"), pt(model, "interleaved", k, std::nullopt, "50:300"),
                                  pt(model, "bucketed", k, 1.0, "50:300"), pt(model, "bucketed", k, 25.0, "50:300")}) {
        text += line(p, modelled_record(p, s, terms));
      }
    }
  }
  return text;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  write_file(path, text);
  return path;
}

TEST(Calibrate, RecoversEveryTermFromRecordsMadeWithIt) {
  const std::string path = temp_file("cal.jsonl", synthetic_sweep(kTrue));
  const predict::Calibration c = predict::calibrate(path, {Mode::naive, Mode::interleaved});
  EXPECT_EQ(c.fit_k, 2);
  EXPECT_NEAR(c.terms.fixed_step_s, kTrue.fixed_step_s, 1e-12);
  EXPECT_NEAR(c.terms.fixed_step_s_per_param, kTrue.fixed_step_s_per_param, 1e-18);
  EXPECT_NEAR(c.terms.contention_s_per_mib, kTrue.contention_s_per_mib, 1e-9);
  EXPECT_NEAR(c.terms.call_overhead_s, kTrue.call_overhead_s, 1e-9);
  EXPECT_EQ(c.terms.cores, 2);
  // Each term is needed: records made without contention give σ = 0, without overhead o = 0.
  MachineTerms no_sigma = kTrue;
  no_sigma.contention_s_per_mib = 0;
  const predict::Calibration c0 =
      predict::calibrate(temp_file("cal0.jsonl", synthetic_sweep(no_sigma)), {Mode::naive, Mode::interleaved});
  EXPECT_NEAR(c0.terms.contention_s_per_mib, 0, 1e-12);
  EXPECT_NEAR(c0.terms.call_overhead_s, kTrue.call_overhead_s, 1e-9);
}

TEST(Calibrate, ADisturbedRunIsLeftOutAndNamed) {
  // One more naive run at K = 2, disturbed and 3x slow: left out, so the terms are unchanged.
  RunRecord slow = modelled_record(pt("small", "naive", 2, std::nullopt, "50:300", 1), single_of("small", 0.5), kTrue);
  slow.compute_s *= 3;
  const std::string path = temp_file("dist.jsonl", synthetic_sweep(kTrue) + line(pt("small", "naive", 2, std::nullopt, "50:300", 1), slow,
                                                                                  Machine{"Test CPU", 2, "probe -40%, load 1.4"}));
  const predict::Calibration c = predict::calibrate(path, {Mode::naive, Mode::interleaved});
  ASSERT_EQ(c.left_out.size(), 1u);
  EXPECT_NE(c.left_out[0].find("probe -40%"), std::string::npos) << c.left_out[0];
  EXPECT_NEAR(c.terms.fixed_step_s, kTrue.fixed_step_s, 1e-12);
  EXPECT_NE(predict::describe_fits(c).find("left out"), std::string::npos);
}

TEST(Calibrate, OversubscriptionStretchesComputeAboveTheCores) {
  const predict::SingleRun s = single_of("medium", 3.2);
  MachineTerms t;
  t.cores = 2;
  const RunRecord k4 = modelled_record(pt("medium", "naive", 4, std::nullopt, "50:300"), s, t);
  // 4 ranks on 2 cores: each rank's compute is T1/4 stretched by 2.
  EXPECT_NEAR(k4.compute_s, 3.2 / 4 * 2, 1e-9);
  // The fixed step does not shrink with K: ((t1 - φ)/K + φ) per step.
  MachineTerms f;
  f.fixed_step_s = 0.01;
  const RunRecord fk4 = modelled_record(pt("medium", "naive", 4, std::nullopt, "50:300"), s, f);
  EXPECT_NEAR(fk4.compute_s, 8 * ((0.4 - 0.01) / 4 + 0.01), 1e-9);
  // On two nodes of 2 ranks (2 per node on 2 cores) there is no stretch.
  EXPECT_NEAR(predict::predict_recorded(s, [&] { RunRecord r = k4; r.n_nodes = 2; return r; }(), t).compute_s, 3.2 / 4, 1e-9);
}

TEST(Calibrate, ValidationNeverScoresAFittedPointAndHitsHeldOutPointsMadeWithTheTerms) {
  const std::string path = temp_file("val.jsonl", synthetic_sweep(kTrue));
  const predict::Calibration c = predict::calibrate(path, {Mode::naive, Mode::interleaved});
  const predict::Validation v = predict::validate(path, c);
  ASSERT_EQ(v.fitted.size(), 4u);  // small and medium, naive and interleaved, K = 2
  ASSERT_EQ(v.rows.size(), 12u);   // bucketed ×2 at K = 2, and naive, interleaved, bucketed ×2 at K = 4, per model
  for (const predict::ValidationRow& r : v.rows) {
    EXPECT_FALSE(r.point.world_size == 2 && (r.point.mode == Mode::naive || r.point.mode == Mode::interleaved))
        << r.point.describe();
    EXPECT_NEAR(r.error, 0, 1e-9) << r.point.describe();
  }
  // Without the terms the same held-out points are predicted optimistic (negative control).
  const predict::Validation bare = predict::validate(path);
  EXPECT_LT(bare.summary.back().signed_median, -0.02);
  EXPECT_GT(bare.summary.back().median_abs, 0.02);
}

TEST(Calibrate, SummaryHasMedianP90AndBias) {
  std::vector<predict::ValidationRow> rows;
  const std::string path = temp_file("sum.jsonl", synthetic_sweep(kTrue));
  // Predict with σ doubled: every overlapped point too slow, naive unchanged.
  predict::Calibration c = predict::calibrate(path, {Mode::naive, Mode::interleaved});
  c.terms.contention_s_per_mib *= 2;
  const predict::Validation v = predict::validate(path, c);
  for (const predict::ErrorSummary& s : v.summary) {
    if (s.scope == "naive") EXPECT_NEAR(s.median_abs, 0, 1e-9);
    if (s.scope == "bucketed") {
      EXPECT_GT(s.signed_median, 0);
      EXPECT_GE(s.p90_abs, s.median_abs);
      EXPECT_EQ(v.rows[s.worst].cause(), "compute");
    }
  }
  EXPECT_EQ(v.summary.back().scope, "all");
  EXPECT_EQ(v.summary.back().points, 12);
}

// The summary's numbers on chosen errors: the synthetic sweep's twelve held-out points (every one
// predicted exactly with the terms) given measured epochs 1%, 2%, ... 11% off, alternately too
// slow and too fast, and the twelfth 50% off on a run the machine disturbed. Over the eleven the
// summary counts: median |error| 6%, P90 by nearest rank the 10th smallest (ceil(0.9 x 11)), 10%,
// bias the signed median, and the worst the 11% point.
//
// Catches: the disturbed point scored in the summary (12 points, the worst 50%); P90 off by one
// rank (floor: 9%; one past: 11%); the median of signed errors taken for the bias's |error|.
TEST(Calibrate, TheSummaryOfChosenErrorsLeavesTheDisturbedPointOut) {
  const std::string fit = synthetic_sweep(kTrue);
  const predict::Calibration c = predict::calibrate(temp_file("sumfit.jsonl", fit), {Mode::naive, Mode::interleaved});
  std::string text;
  int held = 0;
  std::vector<double> wanted;  // each held-out point's error, in file order
  for (const auto& [model, t1] : std::vector<std::pair<std::string, double>>{{"small", 0.5}, {"medium", 3.2}}) {
    const predict::SingleRun s = single_of(model, t1);
    text += line(pt(model, "single", 1), modelled_record(pt(model, "single", 1), s, kTrue));
    for (int k : {2, 4}) {
      for (const SweepRun& p : {pt(model, "naive", k, std::nullopt, "50:300"), pt(model, "interleaved", k, std::nullopt, "50:300"),
                                pt(model, "bucketed", k, 1.0, "50:300"), pt(model, "bucketed", k, 25.0, "50:300")}) {
        RunRecord r = modelled_record(p, s, kTrue);
        const bool fitted = k == 2 && (p.point.mode == Mode::naive || p.point.mode == Mode::interleaved);
        if (fitted) {
          text += line(p, r);
          continue;
        }
        ++held;
        const bool disturbed = held == 12;
        // error = (predicted - measured) / measured: measured = predicted / (1 + error)
        const double e = disturbed ? 0.5 : (held % 2 ? 0.01 : -0.01) * held;
        wanted.push_back(e);
        r.avg_epoch_s /= 1 + e;
        text += line(p, r, disturbed ? Machine{"Test CPU", 2, "probe -40%, load 1.4"} : Machine{});
      }
    }
  }
  ASSERT_EQ(held, 12);
  const predict::Validation v = predict::validate(temp_file("sumchosen.jsonl", text), c);
  ASSERT_EQ(v.rows.size(), 12u);
  for (size_t i = 0; i < v.rows.size(); ++i) EXPECT_NEAR(v.rows[i].error, wanted[i], 1e-9) << i;
  EXPECT_TRUE(v.rows[11].disturbed);
  const predict::ErrorSummary& all = v.summary.back();
  EXPECT_EQ(all.scope, "all");
  EXPECT_EQ(all.points, 11);
  EXPECT_NEAR(all.median_abs, 0.06, 1e-9);
  EXPECT_NEAR(all.p90_abs, 0.10, 1e-9);
  // Signed +1, -2, +3, ..., +11%: sorted -10 -8 -6 -4 -2 +1 +3 ..., the 6th of 11 is +1%.
  EXPECT_NEAR(all.signed_median, 0.01, 1e-9);
  EXPECT_NEAR(v.rows[all.worst].error, 0.11, 1e-9);
  EXPECT_NEAR(v.median_abs_error, 0.06, 1e-9);
}

// The lines a cap check calibrates from besides its cap sweep: medium's single run and its naive
// and interleaved runs at K = 2 on the 50:300 link, each made with the terms.
std::string medium_single_naive_interleaved(const predict::SingleRun& s) {
  std::string text;
  for (const SweepRun& p : {pt("medium", "single", 1), pt("medium", "naive", 2, std::nullopt, "50:300"),
                            pt("medium", "interleaved", 2, std::nullopt, "50:300")}) {
    text += line(p, modelled_record(p, s, kTrue));
  }
  return text;
}

// The cap advice holds when the recommended cap measured within 3% of the best measured cap: a cap
// sweep made with the terms, every cap measured at one epoch time but the advised one, 2.5% slower
// (holds) or 3.5% slower (does not); the gap is the advised cap's own measured epoch over the best's.
//
// Catches: kCapTolerance moved off 3%, and the advised cap paired with another cap's measured epoch
// (the gap would read 0 and the 3.5% cell hold).
TEST(Calibrate, TheCapAdviceHoldsWithinThreePercentOfTheBestMeasuredCap) {
  const predict::SingleRun s = single_of("medium", 3.2);
  const std::string head = medium_single_naive_interleaved(s);
  const std::vector<double> caps = {0.25, 1.0, 4.0, 16.0, 64.0};
  auto sweep = [&](std::optional<double> advised, double slower) {
    std::string text = head;
    for (double cap : caps) {
      const SweepRun p = pt("medium", "bucketed", 2, cap, "50:300");
      RunRecord r = modelled_record(p, s, kTrue);
      if (advised) r.avg_epoch_s = cap == *advised ? 1.0 * (1 + slower) : 1.0;
      text += line(p, r);
    }
    return text;
  };
  const predict::Calibration c = predict::calibrate(temp_file("tolcal.jsonl", sweep(std::nullopt, 0)), {Mode::naive, Mode::interleaved});
  const double advised = predict::check_caps(temp_file("tol0.jsonl", sweep(std::nullopt, 0)), c).cells.at(0).predicted.recommended_mb();
  for (const auto& [slower, holds] : std::vector<std::pair<double, bool>>{{0.025, true}, {0.035, false}}) {
    const predict::CapCheck check = predict::check_caps(temp_file("tol.jsonl", sweep(advised, slower)), c);
    ASSERT_EQ(check.cells.size(), 1u);
    const predict::CapCell& cell = check.cells[0];
    EXPECT_EQ(cell.predicted.recommended_mb(), advised);  // the advice is the prediction's, not the measurement's
    EXPECT_NEAR(cell.recommended_epoch_s, 1 + slower, 1e-12);
    EXPECT_NEAR(cell.measured_epoch_s[cell.measured_best], 1.0, 1e-12);
    EXPECT_NEAR(cell.gap(), slower, 1e-12);
    EXPECT_EQ(cell.holds(), holds) << "advised " << advised << " MiB, " << slower * 100 << "% slower than the best";
  }
}

TEST(Calibrate, PredictsTheSameAllreduceTimeAsTheLinkEmulation) {
  // The same function, so equal to the last bit, for every algorithm, link, size and K.
  for (const std::string& link : {"nvlink", "pcie4", "eth10", "50:300"}) {
    for (const std::string& algo : {"native", "ring", "star"}) {
      predict::CommModel m;
      m.algo = parse_allreduce_algo(algo);
      m.link = parse_link(link);
      m.link.dilation = 3.5;
      for (size_t bytes : {size_t{4}, size_t{1} << 20, size_t{100} << 20}) {
        for (int k : {2, 3, 4, 8, 64}) {
          EXPECT_EQ(m.seconds(bytes, k), modelled_seconds(m.algo, m.link, bytes, k)) << link << " " << algo << " " << k;
        }
      }
    }
  }
  // hier: --intra-link inside a node of G, --link across nodes: the contract's two-tier formula.
  predict::CommModel h;
  h.algo = AllreduceAlgo::hier;
  h.link = parse_link("ib100");
  h.intra = parse_link("nvlink");
  h.gpus_per_node = 4;
  LinkModel two = parse_two_tier_link("intra=nvlink,inter=ib100,ranks-per-node=4");
  EXPECT_EQ(h.seconds(64 << 20, 16), modelled_seconds(AllreduceAlgo::hier, two, 64 << 20, NodeShape{4, 4}));
  EXPECT_EQ(h.seconds(64 << 20, 4), modelled_seconds(AllreduceAlgo::hier, two, 64 << 20, NodeShape{1, 4}));
}

TEST(Calibrate, CapCheckCountsTheCellsWhoseAdviceHolds) {
  // A cap sweep made with the terms: the advice's measured time is the predicted minimum's.
  const predict::SingleRun s = single_of("medium", 3.2);
  std::string text = medium_single_naive_interleaved(s);
  std::string slow = text;
  for (double cap : {0.25, 1.0, 4.0, 16.0, 64.0}) {
    const SweepRun p = pt("medium", "bucketed", 2, cap, "50:300");
    RunRecord r = modelled_record(p, s, kTrue);
    text += line(p, r);
    r.avg_epoch_s *= cap == 64.0 ? 1.0 : 0.9;  // every cap but the largest measured 10% faster
    slow += line(p, r);
  }
  const predict::Calibration c = predict::calibrate(temp_file("capcal.jsonl", text), {Mode::naive, Mode::interleaved});
  const predict::CapCheck good = predict::check_caps(temp_file("caps.jsonl", text), c);
  ASSERT_EQ(good.cells.size(), 1u);
  EXPECT_TRUE(good.cells[0].holds());
  EXPECT_NEAR(good.cells[0].gap(), 0, 1e-9);
  const predict::CapCheck bad = predict::check_caps(temp_file("slow.jsonl", slow), c);
  // Whatever the advice, only 64 MiB was not made faster: advice at 64 fails by 11%, any other holds.
  const bool advised_64 = bad.cells[0].predicted.recommended_mb() == 64.0;
  EXPECT_EQ(bad.cells[0].holds(), !advised_64);
  // Caps measured on another machine than the calibration's: refused, naming the line.
  std::string other;
  for (const std::string& l : lines_of(text)) {
    nlohmann::json j = nlohmann::json::parse(l);
    j["system"]["cpu_model"] = "Other CPU";
    other += j.dump() + "\n";
  }
  try {
    predict::check_caps(temp_file("other-caps.jsonl", other), c);
    ADD_FAILURE() << "another machine's caps were checked";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other-caps.jsonl:1: measured on"), std::string::npos) << e.what();
  }
}

TEST(Calibrate, RefusesBadCalibrationFilesWithExitStatus2) {
  const std::string good = synthetic_sweep(kTrue);
  std::string no_single, failed, disturbed, two_machines;
  for (const std::string& l : lines_of(good)) {
    const bool single = l.find("\"mode\":\"single\"") != std::string::npos;
    if (!single) no_single += l + "\n";
    failed += l + "\n";
    two_machines += l + "\n";
  }
  failed += line(pt("large", "naive", 2, std::nullopt, "50:300"), std::nullopt, Machine{}, "exit status 1");
  failed += line(pt("large", "single", 1), std::nullopt, Machine{}, "exit status 1");
  // Every data-parallel run at the fit K disturbed: nothing left to fit.
  for (const std::string& l : lines_of(good)) {
    nlohmann::json j = nlohmann::json::parse(l);
    if (j["point"]["mode"] != "single" && j["point"]["world_size"] == 2) {
      MachineState st;
      st.disturbed = "others 1.50 CPU, load 5.8";
      j["system"]["state"] = to_json(st);
    }
    disturbed += j.dump() + "\n";
  }
  two_machines += line(pt("small", "naive", 2, std::nullopt, "50:300", 1),
                       modelled_record(pt("small", "naive", 2, std::nullopt, "50:300", 1), single_of("small", 0.5), kTrue),
                       Machine{"Other CPU", 64});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {no_single, "no single-device run"},
      {failed, "failed"},
      {disturbed, "every data-parallel run at K = 2"},
      {two_machines, "calibrate from one machine's runs"},
  };
  int i = 0;
  for (const auto& [text, words] : cases) {
    const std::string path = temp_file("bad" + std::to_string(i++) + ".jsonl", text);
    const ProcessResult r = dpscale({"predict", "--calibrate", path, "--world-sizes", "2"});
    EXPECT_EQ(r.exit_code, 2) << words << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  // A good calibration, validated against another machine's sweep: refused too.
  std::string other;
  for (const std::string& l : lines_of(synthetic_sweep(kTrue))) {
    nlohmann::json j = nlohmann::json::parse(l);
    j["system"]["cpu_model"] = "Other CPU";
    other += j.dump() + "\n";
  }
  const ProcessResult r = dpscale({"predict", "--calibrate", temp_file("good.jsonl", good), "--validate",
                                   temp_file("other.jsonl", other)});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("validate on the calibrated machine's runs"), std::string::npos) << r.err;
  // And the good one runs: the fitted terms printed with their units.
  const ProcessResult ok = dpscale({"predict", "--calibrate", temp_file("good2.jsonl", good), "--world-sizes", "2,4"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("ms per MiB"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("µs per all-reduce"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace dpscale::test

namespace dpscale::test {
namespace {

// The workshop's A100 table (Avg Epoch, Comm Time): naive at K = 2 and 4 fit the link and the
// fixed step; interleaved and DDP are held out.
const char* kSingles = "small=0.0361,medium=0.1180,large=0.4112,xlarge=0.5956";
const char* kComm = "small:2=0.0284,small:4=0.0307,medium:2=0.0328,medium:4=0.0370,large:2=0.0501,large:4=0.0744,"
                    "xlarge:2=0.0700,xlarge:4=0.0940";
const char* kNaiveEpochs = "small:2=0.0602,small:4=0.0653,medium:2=0.1071,medium:4=0.0863,large:2=0.2850,large:4=0.2143,"
                           "xlarge:2=0.4045,xlarge:4=0.2898";

TEST(FitComm, RecoversAlphaBetaAndOverheadFromCommTimesMadeWithThem) {
  // Comm times made by the model itself with α 7 µs, β 40 GB/s, o 50 µs: the fit returns them.
  MachineTerms t;
  t.call_overhead_s = 50e-6;
  predict::CommModel m;
  m.link = LinkModel{"x", 7, 40, 1.0};
  std::string comm;
  for (const std::string& model : {"small", "large"}) {
    for (int k : {2, 4, 8}) {
      const predict::EpochPrediction p = predict::predict_epoch(single_of(model, 1.0), predict::Workload{8192, 1024},
                                                                predict::SyncSetup{}, m, k, t);
      comm += (comm.empty() ? "" : ",") + model + ":" + std::to_string(k) + "=" + format_number(p.naive_comm_s);
    }
  }
  const nlohmann::json rows = nlohmann::json::parse(
      dpscale({"predict", "--single", "small=1,large=1", "--samples", "8192", "--fit-comm", comm, "--world-sizes", "2",
               "--format", "json"})
          .out);
  EXPECT_NEAR(rows[0]["link_alpha_us"].get<double>(), 7, 1e-3);
  EXPECT_NEAR(rows[0]["link_gbps"].get<double>(), 40, 1e-3);
  EXPECT_NEAR(rows[0]["call_overhead_s"].get<double>(), 50e-6, 1e-9);
}

TEST(FitComm, TheWorkshopTableHeldOutMedianWithinFivePercent) {
  const ProcessResult r = dpscale({"predict", "--single", kSingles, "--fit-comm", kComm, "--fit-step", kNaiveEpochs,
                                   "--world-sizes", "2,4", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::map<std::string, double> measured = {
      {"small interleaved 2", 0.0620}, {"small bucketed 2", 0.0436}, {"small interleaved 4", 0.0643},
      {"small bucketed 4", 0.0482},    {"medium interleaved 2", 0.0898}, {"medium bucketed 2", 0.0871},
      {"medium interleaved 4", 0.0871}, {"medium bucketed 4", 0.0674}, {"large interleaved 2", 0.2644},
      {"large bucketed 2", 0.2597},    {"large interleaved 4", 0.1837}, {"large bucketed 4", 0.1784},
      {"xlarge interleaved 2", 0.3669}, {"xlarge bucketed 2", 0.3620}, {"xlarge interleaved 4", 0.2485},
      {"xlarge bucketed 4", 0.2496}};
  std::vector<double> held_out;
  for (const auto& row : nlohmann::json::parse(r.out)) {
    const auto m = measured.find(row["model"].get<std::string>() + " " + row["mode"].get<std::string>() + " " +
                                 std::to_string(row["world_size"].get<int>()));
    if (m != measured.end()) held_out.push_back(std::fabs(row["epoch_s"].get<double>() / m->second - 1));
  }
  ASSERT_EQ(held_out.size(), 16u);
  std::sort(held_out.begin(), held_out.end());
  const double median = (held_out[7] + held_out[8]) / 2;
  EXPECT_LT(median, 0.05);  // 3.3% with the launches charged to backward
  // The link alone (the comm fitted, compute T1/K) misses by far more: the fixed step is needed.
  const ProcessResult bare = dpscale({"predict", "--single", kSingles, "--fit-comm", kComm, "--world-sizes", "2,4", "--format", "json"});
  std::vector<double> bare_err;
  for (const auto& row : nlohmann::json::parse(bare.out)) {
    const auto m = measured.find(row["model"].get<std::string>() + " " + row["mode"].get<std::string>() + " " +
                                 std::to_string(row["world_size"].get<int>()));
    if (m != measured.end()) bare_err.push_back(std::fabs(row["epoch_s"].get<double>() / m->second - 1));
  }
  std::sort(bare_err.begin(), bare_err.end());
  EXPECT_GT((bare_err[7] + bare_err[8]) / 2, 0.2);
}

TEST(FitComm, RefusesBadSpecsWithExitStatus2) {
  for (const auto& [args, words] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--fit-comm", "small:2"}, "not MODEL:K=SECONDS"},
           {{"--fit-comm", "small:1=0.1"}, "--fit-comm"},
           {{"--fit-comm", "huge:2=0.1"}, "no single-device epoch"},
           {{"--fit-comm", "small:2=0.03", "--link", "pcie4"}, "give one of --link"},
           {{"--fit-step", "small:2=0.06"}, "--fit-step needs --fit-comm"},
           {{"--fit-comm", "small:2=0.03", "--fit-step", "small:4=0.06"}, "has no comm time"}}) {
    std::vector<std::string> a = {"predict", "--single", "small=0.0361"};
    a.insert(a.end(), args.begin(), args.end());
    const ProcessResult r = dpscale(a);
    EXPECT_EQ(r.exit_code, 2) << words << ": " << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace dpscale::test

namespace dpscale::test {
namespace {

TEST(Recommend, TwoByteGradientsPayOnASlowLinkAndNotOnAFastOne) {
  const nlohmann::json slow = nlohmann::json::parse(
      dpscale({"predict", "--recommend", "--single", "large=8", "--link", "eth10", "--world-sizes", "4", "--format", "json"}).out);
  ASSERT_EQ(slow.size(), 1u);
  // On 10 GbE the step is almost all comm: half the bytes takes off close to half the epoch.
  EXPECT_GT(slow[0]["two_byte_gain"].get<double>(), 0.3);
  EXPECT_TRUE(slow[0]["two_byte_pays"].get<bool>());
  EXPECT_TRUE(slow[0]["accum_pays"].get<bool>());
  EXPECT_EQ(slow[0]["accum_steps"], 8);
  const nlohmann::json fast = nlohmann::json::parse(
      dpscale({"predict", "--recommend", "--single", "xlarge=6", "--link", "nvlink", "--world-sizes", "2", "--format", "json"}).out);
  EXPECT_LT(fast[0]["two_byte_gain"].get<double>(), 0.03);
  EXPECT_FALSE(fast[0]["two_byte_pays"].get<bool>());
  // The mode is the fastest predicted: never naive where overlap exists to be had.
  EXPECT_NE(fast[0]["mode"], "naive");
  EXPECT_NE(slow[0]["mode"], "naive");
}

}  // namespace
}  // namespace dpscale::test

namespace dpscale::test {
namespace {

TEST(Busy, APredictionFromDisturbedRunsIsMarked) {
  const std::string clean = synthetic_sweep(kTrue);
  const std::string busy = clean + line(pt("small", "naive", 2, std::nullopt, "50:300", 1),
                                        modelled_record(pt("small", "naive", 2, std::nullopt, "50:300", 1),
                                                        single_of("small", 0.5), kTrue),
                                        Machine{"Test CPU", 2, "others 1.50 CPU, load 5.8"});
  auto busy_of = [](const std::string& path) {
    const ProcessResult r = dpscale({"predict", "--from", path, "--world-sizes", "2", "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)[0]["busy"];
  };
  EXPECT_TRUE(busy_of(temp_file("clean.jsonl", clean)).is_null());
  const nlohmann::json b = busy_of(temp_file("busy.jsonl", busy));
  ASSERT_TRUE(b.is_string());
  EXPECT_NE(b.get<std::string>().find("others 1.50 CPU"), std::string::npos) << b;
}

}  // namespace
}  // namespace dpscale::test
