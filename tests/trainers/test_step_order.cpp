// test_step_order.cpp — the order in which one training step hands work to the device and the
// communicator, recorded on the CPU backend (no MPI): a Device that forwards to CpuDevice and
// logs the calls, and a Communicator of one rank that logs its own.
//
// On a GPU the host's wait for the all-reduces (GradSync::drain) must come after the update and
// the loss copy have been queued, so the stream has work while the host polls; and the first
// timed step must not allocate (the momentum buffer belongs to warm-up). On the CPU the order
// of the calls is the same code path, so the log shows it.
//
// Run: ctest -R TrainStepOrder   (or ./tests/trainers/test_step_order)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "models/cpu/cpu_device.h"
#include "models/data/dataset.h"
#include "models/mlp.h"
#include "trainers/grad_sync.h"
#include "trainers/sync_factory.h"
#include "trainers/rank_setup.h"
#include "trainers/train_loop.h"

namespace dpscale {
namespace {

using Log = std::vector<std::string>;

// CpuDevice with every call forwarded; the calls a step's tail makes are logged by name.
class RecordingDevice final : public Device {
 public:
  explicit RecordingDevice(Log& log) : log_(log), cpu_(1) {}
  Backend backend() const override { return cpu_.backend(); }
  std::string name() const override { return cpu_.name(); }
  bool host_visible() const override { return cpu_.host_visible(); }
  void* alloc_bytes(size_t nbytes) override {
    ++allocations;
    return cpu_.alloc_bytes(nbytes);
  }
  void free_bytes(void* p) noexcept override { cpu_.free_bytes(p); }
  void upload(void* dst, const void* src, size_t n) override { cpu_.upload(dst, src, n); }
  void download(void* dst, const void* src, size_t n) override {
    log_.push_back("download");
    cpu_.download(dst, src, n);
  }
  void copy(void* dst, const void* src, size_t n) override {
    log_.push_back("copy");
    cpu_.copy(dst, src, n);
  }
  void fill(float* x, float v, int64_t n) override {
    log_.push_back("fill");
    cpu_.fill(x, v, n);
  }
  void synchronize() override { cpu_.synchronize(); }
  void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    cpu_.gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void column_sum(const float* a, int rows, int cols, float* out) override { cpu_.column_sum(a, rows, cols, out); }
  void add(float* y, const float* x, int n) override { cpu_.add(y, x, n); }
  void bias_act(float* y, const float* bias, int rows, int cols, bool relu) override {
    cpu_.bias_act(y, bias, rows, cols, relu);
  }
  void relu_backward(float* dx, const float* y, int64_t n) override { cpu_.relu_backward(dx, y, n); }
  void softmax_xent(const float* z, const int32_t* labels, int rows, int cols, float grad_scale, float* dz,
                    float* loss_mean, float* loss_scaled, float scaled_factor) override {
    cpu_.softmax_xent(z, labels, rows, cols, grad_scale, dz, loss_mean, loss_scaled, scaled_factor);
  }
  int64_t count_correct(const float* z, const int32_t* labels, int rows, int cols) override {
    return cpu_.count_correct(z, labels, rows, cols);
  }
  void sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float wd, float* flag) override {
    log_.push_back(flag ? "sgd+check" : "sgd");
    cpu_.sgd(w, g, v, n, lr, momentum, wd, flag);
  }
  void adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& sc, float* flag) override {
    log_.push_back(flag ? "adamw+check" : "adamw");
    cpu_.adamw(w, g, m, v, n, sc, flag);
  }
  void flag_nonfinite(const float* x, int64_t n, float* flag) override {
    log_.push_back("flag_nonfinite");
    cpu_.flag_nonfinite(x, n, flag);
  }
  uint64_t memory_bytes() const override { return cpu_.memory_bytes(); }

  int allocations = 0;

 private:
  Log& log_;
  CpuDevice cpu_;
};

class NoWork final : public Work {
 public:
  void wait() override {}
  bool done() override { return true; }
};

// One rank: the sum over ranks is the data itself. Logs what the GradSync asks of it.
class RecordingComm final : public Communicator {
 public:
  explicit RecordingComm(Log& log) : log_(log) {}
  std::string name() const override { return "recording"; }
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  std::unique_ptr<Work> allreduce_sum(float*, size_t) override {
    log_.push_back("allreduce");
    return std::make_unique<NoWork>();
  }
  void finish() override { log_.push_back("finish"); }
  void drain() override { log_.push_back("drain"); }
  double take_busy_seconds() override { return 0.0; }

 private:
  Log& log_;
};

struct Rig {
  Log log;
  RecordingComm comm{log};
  std::unique_ptr<RankSetup> s = std::make_unique<RankSetup>();
  RecordingDevice* dev = nullptr;
  std::unique_ptr<GradSync> sync;

  explicit Rig(double momentum) {
    s->opts.mode = Mode::interleaved;
    s->opts.batch_size = 8;
    s->opts.momentum = momentum;
    s->spec = parse_model_spec("5,4,3", 0);
    s->local_batch = 8;
    s->steps_per_epoch = 2;
    s->opts.epochs = 1;
    s->opts.warmup_steps = 1;
    s->opts.quiet = true;
    auto d = std::make_unique<RecordingDevice>(log);
    dev = d.get();
    s->device = std::move(d);
    s->data = make_synthetic(16, 5, 3, 1);
    s->x = s->data.x.data();
    s->y = s->data.y.data();
    s->model = make_model(*s->device, s->spec, 8);
    s->model->init_params(1);
    sync = make_grad_sync(s->opts, *s->model, &comm);
  }
};

size_t position(const Log& log, const std::string& what) {
  return static_cast<size_t>(std::find(log.begin(), log.end(), what) - log.begin());
}

std::string joined(const Log& log) {
  std::string s;
  for (const std::string& e : log) s += e + " ";
  return s;
}

// The host waits (drain) only after the update (sgd) and the loss copy are queued, and reads the
// losses (download) after the wait.
TEST(TrainStepOrder, DrainComesAfterTheUpdateAndTheLossCopyAreQueued) {
  Rig r(0.0);
  r.log.clear();
  train_step(*r.s, *r.sync, 0, true, true, nullptr);
  SCOPED_TRACE(joined(r.log));
  const size_t finish = position(r.log, "finish"), sgd = position(r.log, "sgd+check"), copy = position(r.log, "copy"),
               drain = position(r.log, "drain"), download = position(r.log, "download");
  ASSERT_LT(download, r.log.size()) << "the step read no losses";
  EXPECT_LT(finish, sgd) << "the update is ordered after the all-reduces";
  EXPECT_LT(sgd, drain) << "the host waited for the all-reduces before queueing the update";
  EXPECT_LT(copy, drain) << "the host waited for the all-reduces before queueing the loss copy";
  EXPECT_LT(drain, download) << "the losses are read after the wait";
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "drain"), 1) << "one host wait on the all-reduces per step";
}

// The finite check of a step with an update is the update's own pass: one optimizer call that
// checks, and no pass of its own over the gradients or the weights, no flag cleared (fill). A
// step without an update (warm-up) keeps the passes of its own. The same step with the check
// off (--finite-check-every's unchecked steps) runs the optimizer unchecked — the control that
// the log tells the two apart.
TEST(TrainStepOrder, CheckedUpdateIsOnePassWithNoPassOfItsOwn) {
  Rig r(0.0);
  r.log.clear();
  train_step(*r.s, *r.sync, 0, true, true, nullptr);
  SCOPED_TRACE(joined(r.log));
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "sgd+check"), 1);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "sgd"), 0);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "flag_nonfinite"), 0);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "fill"), 0);
  r.log.clear();
  train_step(*r.s, *r.sync, 1, true, false, nullptr);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "sgd"), 1) << joined(r.log);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "sgd+check"), 0) << joined(r.log);
  r.log.clear();
  train_step(*r.s, *r.sync, 0, false, true, nullptr);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "flag_nonfinite"), 2) << "warm-up: gradients, then weights; "
                                                                          << joined(r.log);
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "sgd+check") + std::count(r.log.begin(), r.log.end(), "sgd"), 0);
}

// With --accum-steps N the micro-batches before the last read nothing back: one download (the
// step's losses) per optimizer step, whatever N.
TEST(TrainStepOrder, AccumulationReadsOncePerStep) {
  Rig r(0.0);
  r.s->opts.accum_steps = 2;
  r.s->steps_per_epoch = 1;
  // The two micro-batches' shard means on the starting weights (the update comes after both).
  Model& m = *r.s->model;
  float means[2];
  for (int j = 0; j < 2; ++j) {
    m.forward(r.s->x + j * 8 * 5, 8);
    m.loss(r.s->y + j * 8, 8, 1.0f / 16);
    means[j] = m.loss_mean();
  }
  r.log.clear();
  const StepLosses l = train_step(*r.s, *r.sync, 0, true, true, nullptr);
  SCOPED_TRACE(joined(r.log));
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "download"), 1);
  EXPECT_FLOAT_EQ(l.local, (means[0] + means[1]) / 2) << "the step's local loss is its micro-batches' mean";
  EXPECT_NE(means[0], means[1]) << "two different batches, or the test cannot tell a mean from one of them";
}

// A step without the update (warm-up) drains too, once, before the losses are read.
TEST(TrainStepOrder, WarmUpStepDrainsOnceBeforeReading) {
  Rig r(0.0);
  r.log.clear();
  train_step(*r.s, *r.sync, 0, false, false, nullptr);
  SCOPED_TRACE(joined(r.log));
  EXPECT_EQ(std::count(r.log.begin(), r.log.end(), "drain"), 1);
  EXPECT_LT(position(r.log, "copy"), position(r.log, "drain"));
  EXPECT_LT(position(r.log, "drain"), position(r.log, "download"));
}

// With momentum, warm-up leaves the momentum buffer allocated: the first timed step allocates
// nothing (on CUDA that would be a cudaMalloc, which synchronises, inside the first epoch).
TEST(TrainStepOrder, FirstTimedStepAfterWarmUpAllocatesNothing) {
  Rig r(0.9);
  warm_up(*r.s, *r.sync);
  const int before = r.dev->allocations;
  train_step(*r.s, *r.sync, 0, true, true, nullptr);
  EXPECT_EQ(r.dev->allocations, before) << "the first update allocated its momentum buffer";
  // Control: the momentum buffer is a real allocation, made with the strategy (before warm-up):
  // the same rig without momentum allocates one buffer fewer, and neither allocates in a step.
  Rig plain(0.0);
  EXPECT_EQ(r.dev->allocations, plain.dev->allocations + 1) << "momentum's state is one allocation";
  const int plain_before = plain.dev->allocations;
  train_step(*plain.s, *plain.sync, 0, true, true, nullptr);
  EXPECT_EQ(plain.dev->allocations, plain_before);
}

}  // namespace
}  // namespace dpscale
