// gpt_spec.cpp — presets and parsing of --model gpt:..., the tensor list, the step's GEMMs.
#include "gpt_spec.h"

#include <charconv>
#include <cmath>
#include <map>

#include "core/errors.h"

namespace dpscale {

namespace {

struct Preset {
  const char* name;
  int layers, dim, heads, vocab, context;
};
constexpr Preset kPresets[] = {
    {"gpt-tiny", 2, 64, 4, 256, 64},
    {"gpt2-small", 12, 768, 12, 50257, 1024},
    {"gpt2-medium", 24, 1024, 16, 50257, 1024},
};
// Token ids travel as floats in the dataset (models/data/token_data.h): exact below 2^24.
constexpr int kMaxVocab = 1 << 24;
constexpr int kMaxDim = 1 << 14, kMaxLayers = 256, kMaxContext = 1 << 16;

std::string custom_key(const GptSpec& s) {
  return "gpt:layers=" + std::to_string(s.layers) + ",dim=" + std::to_string(s.dim) + ",heads=" +
         std::to_string(s.heads) + ",vocab=" + std::to_string(s.vocab) + ",context=" + std::to_string(s.context);
}

int parse_field(const std::string& text, const std::string& key, const std::string& value, int lo, int hi) {
  int v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
    throw OptionError("--model", "'" + text + "': " + key + "='" + value + "' is not a whole number");
  }
  if (v < lo || v > hi) {
    throw OptionError("--model", "'" + text + "': " + key + "=" + value + " is out of range " + std::to_string(lo) +
                                     ".." + std::to_string(hi));
  }
  return v;
}

GptSpec parse_custom(const std::string& text) {
  const std::string body = text.substr(4);  // after "gpt:"
  std::map<std::string, int> got;
  const std::map<std::string, std::pair<int, int>> ranges = {{"layers", {1, kMaxLayers}},
                                                             {"dim", {1, kMaxDim}},
                                                             {"heads", {1, kMaxDim}},
                                                             {"vocab", {2, kMaxVocab}},
                                                             {"context", {1, kMaxContext}}};
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t end = body.find(',', pos);
    if (end == std::string::npos) end = body.size();
    const std::string item = body.substr(pos, end - pos);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw OptionError("--model", "'" + text + "': '" + item + "' is not KEY=VALUE (keys: layers, dim, heads, vocab, context)");
    }
    const std::string key = item.substr(0, eq);
    auto r = ranges.find(key);
    if (r == ranges.end()) {
      throw OptionError("--model", "'" + text + "': unknown key '" + key + "' (keys: layers, dim, heads, vocab, context)");
    }
    if (got.count(key)) throw OptionError("--model", "'" + text + "': " + key + " is given twice");
    got[key] = parse_field(text, key, item.substr(eq + 1), r->second.first, r->second.second);
    pos = end + 1;
  }
  for (const auto& [key, range] : ranges) {
    if (!got.count(key)) throw OptionError("--model", "'" + text + "': " + key + "= is missing");
  }
  GptSpec s{"custom", got["layers"], got["dim"], got["heads"], got["vocab"], got["context"], 0};
  if (s.dim % s.heads != 0) {
    throw OptionError("--model", "'" + text + "': dim " + std::to_string(s.dim) + " is not divisible by heads " +
                                     std::to_string(s.heads));
  }
  return s;
}

}  // namespace

int64_t GptSpec::n_params() const {
  const int64_t d = dim;
  const int64_t block = 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d);
  return int64_t{vocab} * d + int64_t{context} * d + layers * block + 2 * d;
}

std::string GptSpec::key() const { return name == "custom" ? custom_key(*this) : name; }

std::string GptSpec::describe() const {
  return key() + " [L " + std::to_string(layers) + ", d " + std::to_string(dim) + ", heads " + std::to_string(heads) +
         ", vocab " + std::to_string(vocab) + ", context " + std::to_string(context) + "], seq " + std::to_string(seq_len);
}

bool is_gpt_model(const std::string& text) { return text.rfind("gpt", 0) == 0; }

const std::vector<std::string>& gpt_preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Preset& p : kPresets) n.emplace_back(p.name);
    return n;
  }();
  return names;
}

GptSpec parse_gpt(const std::string& text, int seq_len) {
  GptSpec s;
  bool found = false;
  for (const Preset& p : kPresets) {
    if (text == p.name) {
      s = GptSpec{p.name, p.layers, p.dim, p.heads, p.vocab, p.context, 0};
      found = true;
    }
  }
  if (!found) {
    if (text.rfind("gpt:", 0) != 0) {
      throw OptionError("--model", "unknown transformer '" + text +
                                        "' (use gpt-tiny, gpt2-small, gpt2-medium or gpt:layers=L,dim=D,heads=H,vocab=V,context=C)");
    }
    s = parse_custom(text);
  }
  if (seq_len < 0) throw OptionError("--seq-len", "must not be negative (got " + std::to_string(seq_len) + ")");
  if (seq_len > s.context) {
    throw OptionError("--seq-len", std::to_string(seq_len) + " exceeds the context " + std::to_string(s.context) +
                                       " of --model " + text);
  }
  s.seq_len = seq_len == 0 ? s.context : seq_len;
  return s;
}

std::vector<TensorDesc> gpt_tensors(const GptSpec& s) {
  const int d = s.dim;
  std::vector<TensorDesc> out;
  // Forward (state_dict) order: wte 0, wpe 1, block N's twelve at 2 + 12N.., ln_f last.
  const int lnf = 2 + 12 * s.layers;
  out.push_back({"ln_f.weight", -1, true, d, 1, lnf});
  out.push_back({"ln_f.bias", -1, true, d, 1, lnf + 1});
  for (int n = s.layers - 1; n >= 0; --n) {
    const std::string h = "h." + std::to_string(n) + ".";
    const int f = 2 + 12 * n;  // forward: ln_1 w b, c_attn w b, attn.c_proj w b, ln_2 w b, c_fc w b, mlp.c_proj w b
    out.push_back({h + "mlp.c_proj.weight", n, false, 4 * d, d, f + 10});
    out.push_back({h + "mlp.c_proj.bias", n, true, d, 1, f + 11});
    out.push_back({h + "mlp.c_fc.weight", n, false, d, 4 * d, f + 8});
    out.push_back({h + "mlp.c_fc.bias", n, true, 4 * d, 1, f + 9});
    out.push_back({h + "ln_2.weight", n, true, d, 1, f + 6});
    out.push_back({h + "ln_2.bias", n, true, d, 1, f + 7});
    out.push_back({h + "attn.c_proj.weight", n, false, d, d, f + 4});
    out.push_back({h + "attn.c_proj.bias", n, true, d, 1, f + 5});
    out.push_back({h + "attn.c_attn.weight", n, false, d, 3 * d, f + 2});
    out.push_back({h + "attn.c_attn.bias", n, true, 3 * d, 1, f + 3});
    out.push_back({h + "ln_1.weight", n, true, d, 1, f + 0});
    out.push_back({h + "ln_1.bias", n, true, d, 1, f + 1});
  }
  out.push_back({"wpe.weight", -1, false, s.context, d, 1});
  out.push_back({"wte.weight", -1, false, s.vocab, d, 0});
  return out;
}

std::vector<GemmShape> gpt_step_gemms(const GptSpec& s, int batch) {
  const int d = s.dim, S = s.seq_len, N = batch * S, hd = s.head_dim(), V = s.vocab;
  std::vector<GemmShape> out;
  // A Conv1D x[N,in] · W[in,out]: forward (N,N); weight grad x^T·dy (T,N); input grad dy·W^T (N,T).
  auto conv = [&](int layer, int in, int o, bool input_grad) {
    out.push_back({layer, GemmKind::weight_grad, true, false, in, o, N, in, o, o});
    if (input_grad) out.push_back({layer, GemmKind::input_grad, false, true, N, in, o, o, o, in});
  };
  for (int l = 0; l < s.layers; ++l) {
    out.push_back({l, GemmKind::forward, false, false, N, 3 * d, d, d, 3 * d, 3 * d});      // qkv
    out.push_back({l, GemmKind::forward, false, true, S, S, hd, 3 * d, 3 * d, S});         // q·kᵀ
    out.push_back({l, GemmKind::forward, false, false, S, hd, S, S, 3 * d, d});            // p·v
    out.push_back({l, GemmKind::forward, false, false, N, d, d, d, d, d});                 // attn proj
    out.push_back({l, GemmKind::forward, false, false, N, 4 * d, d, d, 4 * d, 4 * d});     // fc
    out.push_back({l, GemmKind::forward, false, false, N, d, 4 * d, 4 * d, d, d});         // mlp proj
  }
  out.push_back({s.layers, GemmKind::forward, false, true, N, V, d, d, d, V});           // logits = h·wteᵀ
  out.push_back({s.layers, GemmKind::weight_grad, true, false, V, d, N, V, d, d});       // dwte = dlogitsᵀ·h
  out.push_back({s.layers, GemmKind::input_grad, false, false, N, d, V, V, d, d});       // dh = dlogits·wte
  for (int l = s.layers - 1; l >= 0; --l) {
    conv(l, 4 * d, d, true);
    conv(l, d, 4 * d, true);
    conv(l, d, d, true);
    out.push_back({l, GemmKind::input_grad, false, true, S, S, hd, d, 3 * d, S});          // dp = dy·vᵀ
    out.push_back({l, GemmKind::weight_grad, true, false, S, hd, S, S, d, 3 * d});         // dv = pᵀ·dy
    out.push_back({l, GemmKind::input_grad, false, false, S, hd, S, S, 3 * d, 3 * d});     // dq = ds·k
    out.push_back({l, GemmKind::weight_grad, true, false, S, hd, S, S, 3 * d, 3 * d});     // dk = dsᵀ·q
    conv(l, d, 3 * d, true);
  }
  return out;
}

std::optional<uint64_t> gpt_bytes(const GptSpec& s, int64_t max_batch, bool momentum) {
  if (max_batch < 0) return std::nullopt;
  // In double: every term is far below 2^53 for the spec's bounds, and the sum is checked below.
  const double B = static_cast<double>(max_batch), S = s.seq_len, d = s.dim, N = B * S;
  const double params = static_cast<double>(s.n_params()) + 64.0 * (12.0 * s.layers + 4);  // + padding
  const double per_layer = 15 * N * d + 4 * N + B * s.heads * S * S;
  const double acts = (s.layers + 1) * N * d + s.layers * per_layer + N * d + 2 * N + 2 * N * s.vocab;
  const double scratch = N * d * 8 + S * S + 4 * d;
  const double floats = params * (momentum ? 3 : 2) + 1 + acts + scratch;
  const double bytes = floats * 4 + B * S * 4.0;  // + the int32 token ids
  if (!(bytes < 9.0e18)) return std::nullopt;
  return static_cast<uint64_t>(std::ceil(bytes));
}

}  // namespace dpscale
