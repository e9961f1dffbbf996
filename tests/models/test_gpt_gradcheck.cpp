// test_gpt_gradcheck.cpp — Gpt::forward/loss/backward (float, CPU backend) against an independent
// double-precision reference written here (embeddings, pre-LN blocks with causal attention and a
// GELU-tanh MLP, ln_f, the tied head, mean cross-entropy over every position) and central finite
// differences of that loss in double.
//
// Tolerance, derived: the reference's central difference with step h = 1e-5 has truncation error
// h²·|L'''|/6 ≈ 1e-10·|L'''| and rounding error ε_64·|L|/h ≈ 1e-16·5/1e-5 = 5e-11, so ~1e-10 in
// all. The analytic side is float: each gradient is a sum of at most B·S·4d ≈ 300 products whose
// terms carry relative error ~ε_32 = 6e-8 per operation through ~10 layers of arithmetic
// (LayerNorm's rstd amplifies by up to 1/σ of its input, ~3 here), so ~1e-5 relative to the
// magnitude of the terms, which is at most ~1 (the parameters are drawn with σ 0.3 so that
// attention and LayerNorm are far from their trivial regimes). Hence |g − ref| ≤ 2e-6 + 2e-3·|ref|
// with room of ~10× over what is achieved (asserted below); negative controls (one gradient
// element off by 1%, the loss scaled by 1.01, a wrong tensor order) must fail it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "models/cpu/cpu_device.h"
#include "models/data/rng.h"
#include "models/gpt/gpt.h"
#include "tests/models/gradcheck.h"

namespace dpscale {
namespace {

constexpr double kAtol = 2e-6;
constexpr double kRtol = 2e-3;
constexpr double kFdStep = 1e-5;

// ---- the independent double reference (GPT-2's maths, written from the paper's figure) ----
struct Ref {
  GptSpec s;
  int B = 0;
  std::vector<int> tokens, targets;           // [B, S]
  std::map<std::string, std::pair<size_t, std::vector<int64_t>>> at;  // name -> offset in p, shape

  const double* t(const std::vector<double>& p, const std::string& name) const { return p.data() + at.at(name).first; }

  static void layernorm(std::vector<double>& x, const double* w, const double* b, int N, int d, double eps) {
    for (int n = 0; n < N; ++n) {
      double m = 0, v = 0;
      for (int i = 0; i < d; ++i) m += x[n * d + i];
      m /= d;
      for (int i = 0; i < d; ++i) v += (x[n * d + i] - m) * (x[n * d + i] - m);
      v /= d;
      for (int i = 0; i < d; ++i) x[n * d + i] = (x[n * d + i] - m) / std::sqrt(v + eps) * w[i] + b[i];
    }
  }
  // y[N, o] = x[N, in] · W[in, o] + b
  static std::vector<double> conv(const std::vector<double>& x, const double* W, const double* b, int N, int in, int o) {
    std::vector<double> y(static_cast<size_t>(N) * o);
    for (int n = 0; n < N; ++n) {
      for (int j = 0; j < o; ++j) {
        double acc = b[j];
        for (int i = 0; i < in; ++i) acc += x[n * in + i] * W[i * o + j];
        y[n * o + j] = acc;
      }
    }
    return y;
  }

  double loss(const std::vector<double>& p) const {
    const int S = s.seq_len, d = s.dim, H = s.heads, hd = d / H, N = B * S, V = s.vocab;
    std::vector<double> x(static_cast<size_t>(N) * d);
    for (int n = 0; n < N; ++n) {
      for (int i = 0; i < d; ++i) x[n * d + i] = t(p, "wte.weight")[tokens[n] * d + i] + t(p, "wpe.weight")[(n % S) * d + i];
    }
    for (int l = 0; l < s.layers; ++l) {
      const std::string h = "h." + std::to_string(l) + ".";
      std::vector<double> a = x;
      layernorm(a, t(p, h + "ln_1.weight"), t(p, h + "ln_1.bias"), N, d, 1e-5);
      const std::vector<double> qkv = conv(a, t(p, h + "attn.c_attn.weight"), t(p, h + "attn.c_attn.bias"), N, d, 3 * d);
      std::vector<double> y(static_cast<size_t>(N) * d, 0.0);
      for (int b = 0; b < B; ++b) {
        for (int hh = 0; hh < H; ++hh) {
          for (int i = 0; i < S; ++i) {
            std::vector<double> sc(static_cast<size_t>(i) + 1);
            double mx = -1e300;
            for (int j = 0; j <= i; ++j) {  // causal: keys up to the query's own position
              double dot = 0;
              for (int k = 0; k < hd; ++k) dot += qkv[(b * S + i) * 3 * d + hh * hd + k] * qkv[(b * S + j) * 3 * d + d + hh * hd + k];
              sc[j] = dot / std::sqrt(static_cast<double>(hd));
              mx = std::max(mx, sc[j]);
            }
            double z = 0;
            for (double& v : sc) z += (v = std::exp(v - mx));
            for (int j = 0; j <= i; ++j) {
              for (int k = 0; k < hd; ++k) y[(b * S + i) * d + hh * hd + k] += sc[j] / z * qkv[(b * S + j) * 3 * d + 2 * d + hh * hd + k];
            }
          }
        }
      }
      const std::vector<double> proj = conv(y, t(p, h + "attn.c_proj.weight"), t(p, h + "attn.c_proj.bias"), N, d, d);
      for (size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
      a = x;
      layernorm(a, t(p, h + "ln_2.weight"), t(p, h + "ln_2.bias"), N, d, 1e-5);
      std::vector<double> f = conv(a, t(p, h + "mlp.c_fc.weight"), t(p, h + "mlp.c_fc.bias"), N, d, 4 * d);
      for (double& v : f) v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      const std::vector<double> m = conv(f, t(p, h + "mlp.c_proj.weight"), t(p, h + "mlp.c_proj.bias"), N, 4 * d, d);
      for (size_t i = 0; i < x.size(); ++i) x[i] += m[i];
    }
    layernorm(x, t(p, "ln_f.weight"), t(p, "ln_f.bias"), N, d, 1e-5);
    double total = 0;
    const double* wte = t(p, "wte.weight");
    for (int n = 0; n < N; ++n) {
      std::vector<double> z(static_cast<size_t>(V));
      double mx = -1e300;
      for (int v = 0; v < V; ++v) {
        double acc = 0;
        for (int i = 0; i < d; ++i) acc += x[n * d + i] * wte[v * d + i];  // the head is wte
        z[v] = acc;
        mx = std::max(mx, acc);
      }
      double sum = 0;
      for (double v : z) sum += std::exp(v - mx);
      total += std::log(sum) + mx - z[targets[n]];
    }
    return total / N;
  }
};

struct Fixture {
  CpuDevice dev{1};
  GptSpec spec;
  Gpt model;
  Ref ref;
  std::vector<float> tokens_f;
  std::vector<double> p;  // the parameters, packed in layout order
  std::vector<size_t> packed;  // tensor index -> offset in p

  static GptSpec make_spec() {
    GptSpec s = parse_gpt("gpt:layers=2,dim=8,heads=2,vocab=11,context=6", 5);
    return s;
  }
  Fixture(int batch, uint64_t seed) : spec(make_spec()), model(dev, spec, batch) {
    ref.s = spec;
    ref.B = batch;
    // σ 0.3 everywhere (gains 1 + 0.3·z): attention far from uniform, LayerNorm far from identity.
    std::vector<float> host(static_cast<size_t>(model.layout().param_buffer_count()), 0.0f);
    const CounterRng rng(seed, 77);
    size_t at = 0;
    for (const FlatTensor& t : model.layout().tensors()) {
      const bool gain = t.name().find("ln_") != std::string::npos && t.name().find(".weight") != std::string::npos;
      for (int64_t j = 0; j < t.count; ++j) host[t.offset + j] = (gain ? 1.0f : 0.0f) + 0.3f * rng.normal(at + j);
      packed.push_back(at);
      ref.at[t.name()] = {at, t.shape()};
      at += static_cast<size_t>(t.count);
    }
    model.params_from_host(host);
    const std::vector<float> pf = pack(host.data());
    p.assign(pf.begin(), pf.end());
    const CounterRng tr(seed, 99);
    for (int i = 0; i < batch * spec.seq_len; ++i) {
      ref.tokens.push_back(static_cast<int>(tr.below(2 * i, spec.vocab)));
      ref.targets.push_back(static_cast<int>(tr.below(2 * i + 1, spec.vocab)));
      tokens_f.push_back(static_cast<float>(ref.tokens.back()));
    }
  }
  std::vector<float> pack(const float* flat) const {
    std::vector<float> v;
    for (const FlatTensor& t : model.layout().tensors()) v.insert(v.end(), flat + t.offset, flat + t.offset + t.count);
    return v;
  }
  std::vector<float> analytic(float grad_scale, bool accumulate = false) {
    model.forward(tokens_f.data(), ref.B);
    model.loss(ref.targets.data(), ref.B, grad_scale, accumulate);
    model.backward(tokens_f.data(), ref.B, nullptr, accumulate);
    return pack(model.grads());
  }
  std::vector<double> fd() const {
    return gradcheck::central_differences(p, kFdStep, [this](const std::vector<double>& q) { return ref.loss(q); });
  }
};

using gradcheck::Mismatch;

Mismatch compare(const std::vector<float>& g, const std::vector<double>& ref, bool print = true) {
  return gradcheck::compare(g, ref, {kAtol, kRtol, 1e-3}, print);  // max_rel over |ref| > 1e-3
}

TEST(ModelsGptGradCheck, LossAndEveryGradientMatchCentralDifferences) {
  Fixture f(2, 7);
  const double ref_loss = f.ref.loss(f.p);
  const std::vector<double> fd = f.fd();
  const std::vector<float> g = f.analytic(1.0f / 2);  // the trainers' 1/B
  EXPECT_NEAR(f.model.loss_mean(), ref_loss, 1e-5 * ref_loss);
  EXPECT_NEAR(f.model.loss_slot_value(), ref_loss, 1e-5 * ref_loss);  // Σ_samples mean loss · (1/B)
  const Mismatch m = compare(g, fd);
  std::printf("[gpt gradcheck] %zu params, loss %.6f: max |g-ref| = %.3g, max rel (|ref| > 1e-3) = %.3g\n", fd.size(),
              ref_loss, m.max_abs, m.max_rel);
  EXPECT_EQ(m.count, 0) << "first mismatch at packed parameter " << m.first;
  EXPECT_LT(m.max_rel, kRtol / 10);  // room over what is achieved
  // Every tensor's gradient is checked on something: most of each tensor's entries are far above
  // the absolute floor (wpe's last row is the only one no position reaches: context 6 > seq 5).
  int64_t large = 0;
  for (double v : fd) large += std::abs(v) > 100 * kAtol;
  EXPECT_GT(large, static_cast<int64_t>(fd.size()) * 3 / 4);
}

TEST(ModelsGptGradCheck, AccumulatingTwiceDoublesEveryGradient) {
  Fixture f(2, 3);
  const std::vector<double> fd = f.fd();
  f.analytic(1.0f / 2);
  const std::vector<float> twice = f.analytic(1.0f / 2, true);
  std::vector<double> doubled(fd);
  for (double& v : doubled) v *= 2;
  EXPECT_EQ(compare(twice, doubled).count, 0);
  EXPECT_GT(compare(twice, fd, false).count, static_cast<int64_t>(fd.size()) / 2);  // not the single gradient
}

TEST(ModelsGptGradCheck, CheckIsSensitive) {
  Fixture f(1, 5);
  const std::vector<double> fd = f.fd();
  std::vector<float> g = f.analytic(1.0f);
  ASSERT_EQ(compare(g, fd, false).count, 0);
  // One element 1% off: the largest gradient, so the relative term is what is tested.
  size_t big = 0;
  for (size_t i = 0; i < fd.size(); ++i) big = std::abs(fd[i]) > std::abs(fd[big]) ? i : big;
  std::vector<float> off = g;
  off[big] *= 1.01f;
  EXPECT_EQ(compare(off, fd, false).count, 1);
  // The loss scaled by 1.01: every gradient off by 1%.
  const std::vector<float> scaled = f.analytic(1.01f);
  EXPECT_GT(compare(scaled, fd, false).count, static_cast<int64_t>(fd.size()) / 2);
  // Two tensors swapped in the comparison (a layout that lied about its order): fails.
  std::vector<float> swapped = g;
  const FlatTensor& a = f.model.layout().tensors()[2];  // h.1.mlp.c_proj.weight [32, 8]
  const FlatTensor& b = f.model.layout().tensors()[4];  // h.1.mlp.c_fc.weight [8, 32]
  ASSERT_EQ(a.count, b.count);
  std::swap_ranges(swapped.begin() + static_cast<int64_t>(f.packed[2]), swapped.begin() + static_cast<int64_t>(f.packed[2] + a.count),
                   swapped.begin() + static_cast<int64_t>(f.packed[4]));
  EXPECT_GT(compare(swapped, fd, false).count, a.count / 2);
}

TEST(ModelsGptGradCheck, ListenerSeesEveryTensorOnceInLayoutOrderTheTiedEmbeddingLast) {
  Fixture f(2, 1);
  struct Order : GradListener {
    std::vector<int> seen;
    void on_grad_ready(const FlatTensor& t) override { seen.push_back(t.index); }
  } order;
  f.model.forward(f.tokens_f.data(), 2);
  f.model.loss(f.ref.targets.data(), 2, 0.5f);
  f.model.backward(f.tokens_f.data(), 2, &order);
  const auto& ts = f.model.layout().tensors();
  ASSERT_EQ(order.seen.size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) EXPECT_EQ(order.seen[i], static_cast<int>(i));
  EXPECT_EQ(ts.back().name(), "wte.weight");
  EXPECT_EQ(ts.size(), 12u * 2 + 4);
}

}  // namespace
}  // namespace dpscale
