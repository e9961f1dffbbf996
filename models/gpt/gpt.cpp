// gpt.cpp — the decoder's init, forward, loss and backward (gpt.h).
//
// Row-major GEMMs with GPT-2's Conv1D weights stored W[in, out]:
//   forward      y[N,out]  = x[N,in] · W[in,out]            gemm(N, N)  (+ b; β = 1 adds the residual)
//   weight grad  dW[in,out] = x[N,in]ᵀ · dy[N,out]          gemm(T, N)  β = 0 (1 when accumulating)
//   input grad   dx[N,in]  = dy[N,out] · W[in,out]ᵀ         gemm(N, T)  β = 0
// The tied head: logits[N,V] = h[N,d] · wte[V,d]ᵀ (N, T); dwte = dlogitsᵀ · h (T, N) written
// first in backward, the embedding's scatter-add adding to it last; dh = dlogits · wte (N, N).
// Attention, LayerNorm, GELU and the embedding: the backend's GptOps (gpt_ops.h).
#include "gpt.h"

#include <cmath>
#include <map>
#include <string>
#include <stdexcept>

#include "models/data/rng.h"

namespace dpscale {

namespace {
constexpr uint64_t kInitStream = 0x6E7000;
}  // namespace

Gpt::Gpt(Device& dev, GptSpec spec, int max_batch)
    : Model(dev, ParamLayout(gpt_tensors(spec)), max_batch), spec_(std::move(spec)), ops_(make_gpt_ops(dev)) {
  // Index the tensors by name once: gpt_tensors() fixes the order, this keeps the maths readable.
  std::map<std::string, int> at;
  for (const FlatTensor& t : layout_.tensors()) at[t.name()] = t.index;
  wte_ = at.at("wte.weight");
  wpe_ = at.at("wpe.weight");
  lnf_w_ = at.at("ln_f.weight");
  lnf_b_ = at.at("ln_f.bias");
  for (int l = 0; l < spec_.layers; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    bt_.push_back({at.at(h + "ln_1.weight"), at.at(h + "ln_1.bias"), at.at(h + "attn.c_attn.weight"),
                   at.at(h + "attn.c_attn.bias"), at.at(h + "attn.c_proj.weight"), at.at(h + "attn.c_proj.bias"),
                   at.at(h + "ln_2.weight"), at.at(h + "ln_2.bias"), at.at(h + "mlp.c_fc.weight"),
                   at.at(h + "mlp.c_fc.bias"), at.at(h + "mlp.c_proj.weight"), at.at(h + "mlp.c_proj.bias")});
  }
  const size_t N = static_cast<size_t>(max_batch) * spec_.seq_len, d = spec_.dim, S = spec_.seq_len;
  const size_t V = spec_.vocab;
  enc_ = DeviceBuffer<float>(dev, N * d);
  for (int l = 0; l < spec_.layers; ++l) {
    Block b;
    b.ln1 = DeviceBuffer<float>(dev, N * d);
    b.ln1_mean = DeviceBuffer<float>(dev, N);
    b.ln1_rstd = DeviceBuffer<float>(dev, N);
    b.qkv = DeviceBuffer<float>(dev, N * 3 * d);
    b.att = DeviceBuffer<float>(dev, static_cast<size_t>(max_batch) * spec_.heads * S * S);
    b.atty = DeviceBuffer<float>(dev, N * d);
    b.res2 = DeviceBuffer<float>(dev, N * d);
    b.ln2 = DeviceBuffer<float>(dev, N * d);
    b.ln2_mean = DeviceBuffer<float>(dev, N);
    b.ln2_rstd = DeviceBuffer<float>(dev, N);
    b.fch = DeviceBuffer<float>(dev, N * 4 * d);
    b.fch_gelu = DeviceBuffer<float>(dev, N * 4 * d);
    b.res3 = DeviceBuffer<float>(dev, N * d);
    blocks_.push_back(std::move(b));
  }
  lnf_ = DeviceBuffer<float>(dev, N * d);
  lnf_mean_ = DeviceBuffer<float>(dev, N);
  lnf_rstd_ = DeviceBuffer<float>(dev, N);
  logits_ = DeviceBuffer<float>(dev, N * V);
  dlogits_ = DeviceBuffer<float>(dev, N * V);
  dres_ = DeviceBuffer<float>(dev, N * d);
  dbig_ = DeviceBuffer<float>(dev, N * 4 * d);
  dln_ = DeviceBuffer<float>(dev, N * d);
  datty_ = DeviceBuffer<float>(dev, N * d);
  dqkv_ = DeviceBuffer<float>(dev, N * 3 * d);
  dp_ = DeviceBuffer<float>(dev, static_cast<size_t>(ops_->attention_scratch_floats(max_batch, spec_.seq_len, spec_.heads)));
  dbias_ = DeviceBuffer<float>(dev, 4 * d);
}

void Gpt::init_params(uint64_t seed) {
  std::vector<float> host(static_cast<size_t>(layout_.param_buffer_count()), 0.0f);
  const float sigma = 0.02f, sigma_proj = 0.02f / std::sqrt(2.0f * static_cast<float>(spec_.layers));
  for (const FlatTensor& t : layout_.tensors()) {
    float* dst = host.data() + t.offset;
    const std::string name = t.name();
    const bool ln_gain = name.find("ln_") != std::string::npos && t.is_bias && name.size() > 7 &&
                         name.compare(name.size() - 7, 7, ".weight") == 0;
    if (ln_gain) {
      for (int64_t j = 0; j < t.count; ++j) dst[j] = 1.0f;
      continue;
    }
    if (t.is_bias) continue;  // biases (and LayerNorm shifts) start at 0
    const bool residual_proj = name.find("c_proj.weight") != std::string::npos;
    const float s = residual_proj ? sigma_proj : sigma;
    const CounterRng rng(seed, kInitStream + static_cast<uint64_t>(t.forward_index));
    for (int64_t j = 0; j < t.count; ++j) dst[j] = s * rng.normal(static_cast<uint64_t>(j));
  }
  params_from_host(host);
}

void Gpt::conv_forward(const float* x, int w, int b, float* y, int rows, int in, int out, float beta) {
  // (N,in) x (in,out) -> (N,out); β = 1 adds to y (the residual already copied there)
  dev_.gemm(false, false, rows, out, in, 1.0f, x, in, p(w), out, beta, y, out);
  dev_.bias_act(y, p(b), rows, out, false);
}

void Gpt::conv_backward(const float* x, int w, int b, const float* dy, float* dx, int rows, int in, int out,
                        bool accumulate, GradListener* listener) {
  // dW: (N,in)^T x (N,out) -> (in,out), β = 0 overwrites (1 adds a micro-batch)
  dev_.gemm(true, false, in, out, rows, 1.0f, x, in, dy, out, accumulate ? 1.0f : 0.0f, g(w), out);
  ready(listener, w);
  if (accumulate) {
    dev_.column_sum(dy, rows, out, dbias_.data());
    add_into(g(b), dbias_.data(), out);
  } else {
    dev_.column_sum(dy, rows, out, g(b));
  }
  ready(listener, b);
  // dx: (N,out) x (in,out)^T -> (N,in), β = 0
  if (dx) dev_.gemm(false, true, rows, in, out, 1.0f, dy, out, p(w), out, 0.0f, dx, in);
}

const float* Gpt::run_forward(const float* x, int batch) {
  if (batch < 1 || batch > max_batch_) throw std::invalid_argument("Gpt::forward: bad batch");
  last_input_ = x;
  const int S = spec_.seq_len, d = spec_.dim, N = batch * S;
  ops_->encoder_forward(enc_.data(), x, p(wte_), p(wpe_), batch, S, d);
  const float* in = enc_.data();
  for (int l = 0; l < spec_.layers; ++l) {
    Block& a = blocks_[static_cast<size_t>(l)];
    const BlockTensors& t = bt_[static_cast<size_t>(l)];
    ops_->layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), in, p(t.ln1_w), p(t.ln1_b), N, d);
    conv_forward(a.ln1.data(), t.attn_w, t.attn_b, a.qkv.data(), N, d, 3 * d, 0.0f);
    ops_->attention_forward(a.atty.data(), a.att.data(), a.qkv.data(), batch, spec_.seq_len, spec_.heads, spec_.head_dim());
    dev_.copy(a.res2.data(), in, sizeof(float) * static_cast<size_t>(N) * d);
    conv_forward(a.atty.data(), t.aproj_w, t.aproj_b, a.res2.data(), N, d, d, 1.0f);  // res2 = in + proj
    ops_->layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.res2.data(), p(t.ln2_w),
                               p(t.ln2_b), N, d);
    conv_forward(a.ln2.data(), t.fc_w, t.fc_b, a.fch.data(), N, d, 4 * d, 0.0f);
    ops_->gelu_forward(a.fch_gelu.data(), a.fch.data(), static_cast<int64_t>(N) * 4 * d);
    dev_.copy(a.res3.data(), a.res2.data(), sizeof(float) * static_cast<size_t>(N) * d);
    conv_forward(a.fch_gelu.data(), t.mproj_w, t.mproj_b, a.res3.data(), N, 4 * d, d, 1.0f);  // res3 = res2 + mlp
    in = a.res3.data();
  }
  ops_->layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), in, p(lnf_w_), p(lnf_b_), N, d);
  // (N,d) x (V,d)^T -> (N,V), β = 0: the head is the token embedding itself
  dev_.gemm(false, true, N, spec_.vocab, d, 1.0f, lnf_.data(), d, p(wte_), d, 0.0f, logits_.data(), spec_.vocab);
  return logits_.data();
}

void Gpt::loss(const int32_t* labels, int batch, float grad_scale, bool accumulate) {
  const float per_position = grad_scale / static_cast<float>(spec_.seq_len);
  softmax_loss(logits_.data(), labels, batch * spec_.seq_len, spec_.vocab, per_position, dlogits_.data(), accumulate);
}

void Gpt::run_backward(const float* x, int batch, GradListener* listener, bool accumulate) {
  const int S = spec_.seq_len, d = spec_.dim, N = batch * S, V = spec_.vocab;
  const float beta = accumulate ? 1.0f : 0.0f;
  // The tied head: dwte = (N,V)^T x (N,d) -> (V,d), β = 0 (1 accumulating); not ready until the
  // embedding's scatter-add below. dln_f: (N,V) x (V,d) -> (N,d), β = 0.
  dev_.gemm(true, false, V, d, N, 1.0f, dlogits_.data(), V, lnf_.data(), d, beta, g(wte_), d);
  dev_.gemm(false, false, N, d, V, 1.0f, dlogits_.data(), V, p(wte_), d, 0.0f, dln_.data(), d);
  const float* last = spec_.layers > 0 ? blocks_.back().res3.data() : enc_.data();
  dev_.fill(dres_.data(), 0.0f, static_cast<int64_t>(N) * d);
  ops_->layernorm_backward(dres_.data(), g(lnf_w_), g(lnf_b_), dln_.data(), last, p(lnf_w_), lnf_mean_.data(),
                              lnf_rstd_.data(), N, d, accumulate);
  ready(listener, lnf_w_);
  ready(listener, lnf_b_);
  for (int l = spec_.layers - 1; l >= 0; --l) {
    Block& a = blocks_[static_cast<size_t>(l)];
    const BlockTensors& t = bt_[static_cast<size_t>(l)];
    const float* in = l == 0 ? enc_.data() : blocks_[static_cast<size_t>(l - 1)].res3.data();
    // res3 = res2 + mlp: dres flows to both; the MLP branch first.
    conv_backward(a.fch_gelu.data(), t.mproj_w, t.mproj_b, dres_.data(), dbig_.data(), N, 4 * d, d, accumulate, listener);
    ops_->gelu_backward(dbig_.data(), a.fch.data(), dbig_.data(), static_cast<int64_t>(N) * 4 * d);
    conv_backward(a.ln2.data(), t.fc_w, t.fc_b, dbig_.data(), dln_.data(), N, d, 4 * d, accumulate, listener);
    ops_->layernorm_backward(dres_.data(), g(t.ln2_w), g(t.ln2_b), dln_.data(), a.res2.data(), p(t.ln2_w),
                                a.ln2_mean.data(), a.ln2_rstd.data(), N, d, accumulate);
    ready(listener, t.ln2_w);
    ready(listener, t.ln2_b);
    // res2 = in + attention: the attention branch.
    conv_backward(a.atty.data(), t.aproj_w, t.aproj_b, dres_.data(), datty_.data(), N, d, d, accumulate, listener);
    ops_->attention_backward(dqkv_.data(), datty_.data(), a.qkv.data(), a.att.data(), dp_.data(), batch, spec_.seq_len,
                             spec_.heads, spec_.head_dim());
    conv_backward(a.ln1.data(), t.attn_w, t.attn_b, dqkv_.data(), dln_.data(), N, d, 3 * d, accumulate, listener);
    ops_->layernorm_backward(dres_.data(), g(t.ln1_w), g(t.ln1_b), dln_.data(), in, p(t.ln1_w), a.ln1_mean.data(),
                                a.ln1_rstd.data(), N, d, accumulate);
    ready(listener, t.ln1_w);
    ready(listener, t.ln1_b);
  }
  ops_->encoder_backward(g(wte_), g(wpe_), dres_.data(), x, batch, S, d, spec_.context, accumulate);
  ready(listener, wpe_);
  ready(listener, wte_);
}

int64_t Gpt::count_correct(const int32_t* labels, int batch) {
  return dev_.count_correct(logits_.data(), labels, batch * spec_.seq_len, spec_.vocab);
}

}  // namespace dpscale
