// step_gemms.cpp — the GEMM list of a training step (mirrors models/mlp.cpp; keep them in step).
#include "step_gemms.h"

namespace dpscale {

const char* gemm_kind_name(GemmKind k) {
  switch (k) {
    case GemmKind::weight_grad: return "weight_grad";
    case GemmKind::input_grad: return "input_grad";
    default: return "forward";
  }
}

std::string GemmShape::label() const {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on long "lit" + string chains.
  std::string s = "L";
  s += std::to_string(layer);
  s += '/';
  s += gemm_kind_name(kind);
  s += trans_a ? "/T" : "/N";
  s += trans_b ? "T" : "N";
  for (const auto& [tag, v] : {std::pair{"/m:", m}, std::pair{"/n:", n}, std::pair{"/k:", k}}) {
    s += tag;
    s += std::to_string(v);
  }
  return s;
}

std::string GemmShape::call_key() const {
  std::string s = trans_a ? "T" : "N";
  s += trans_b ? "T" : "N";
  s += "/m:" + std::to_string(m) + "/n:" + std::to_string(n) + "/k:" + std::to_string(k);
  s += "/ld:" + std::to_string(lda) + "," + std::to_string(ldb) + "," + std::to_string(ldc);
  return s;
}

std::vector<GemmShape> training_step_gemms(const MlpSpec& spec, int batch) {
  std::vector<GemmShape> out;
  for (int l = 0; l < spec.n_layers(); ++l) {
    const int in = spec.widths[l], o = spec.widths[l + 1];
    // (B,in) x (out,in)^T -> (B,out)
    out.push_back({l, GemmKind::forward, false, true, batch, o, in, in, in, o});
  }
  for (int l = spec.n_layers() - 1; l >= 0; --l) {
    const int in = spec.widths[l], o = spec.widths[l + 1];
    // (B,out)^T x (B,in) -> (out,in)
    out.push_back({l, GemmKind::weight_grad, true, false, o, in, batch, o, in, in});
    // (B,out) x (out,in) -> (B,in)
    if (l > 0) out.push_back({l, GemmKind::input_grad, false, false, batch, in, o, o, in, in});
  }
  return out;
}

}  // namespace dpscale
