// model_spec.cpp — --model to an MLP or a transformer, and the replica's factory.
#include "model_spec.h"

#include "models/gemm/gemm_probe.h"
#include "models/gpt/gpt.h"
#include "models/memory_check.h"
#include "models/mlp.h"

namespace dpscale {

int64_t ModelSpec::n_params() const { return is_gpt() ? gpt->n_params() : mlp().n_params(); }
int ModelSpec::in_width() const { return is_gpt() ? gpt->seq_len : widths.front(); }
int ModelSpec::out_width() const { return is_gpt() ? gpt->vocab : widths.back(); }
std::string ModelSpec::key() const { return is_gpt() ? gpt->key() : model_key(name, widths); }

std::string ModelSpec::describe() const {
  if (is_gpt()) return gpt->describe() + ", " + std::to_string(n_params()) + " params";
  return name + " [" + widths_to_string(widths) + "], " + std::to_string(n_params()) + " params";
}

ParamLayout ModelSpec::layout() const { return is_gpt() ? ParamLayout(gpt_tensors(*gpt)) : ParamLayout(mlp()); }

std::vector<GemmShape> ModelSpec::step_gemms(int batch) const {
  return is_gpt() ? gpt_step_gemms(*gpt, batch) : training_step_gemms(mlp(), batch);
}

std::optional<uint64_t> ModelSpec::bytes(int64_t max_batch, bool momentum) const {
  return is_gpt() ? gpt_bytes(*gpt, max_batch, momentum) : mlp_bytes(mlp(), max_batch, momentum);
}

std::map<std::string, std::string> ModelSpec::checkpoint_metadata() const {
  if (is_gpt()) return {{"model", gpt->key()}};
  return {{"widths", widths_to_string(widths)}};
}

ModelSpec parse_model_spec(const std::string& text, int seq_len) {
  ModelSpec s;
  if (is_gpt_model(text)) {
    s.gpt = parse_gpt(text, seq_len);
    s.name = s.gpt->key();
    return s;
  }
  const MlpSpec m = parse_model(text);
  s.name = m.name;
  s.widths = m.widths;
  return s;
}

std::unique_ptr<Model> make_model(Device& dev, const ModelSpec& spec, int max_batch) {
  if (spec.is_gpt()) return std::make_unique<Gpt>(dev, *spec.gpt, max_batch);
  return std::make_unique<Mlp>(dev, spec.mlp(), max_batch);
}

double measure_model_gemm_flops(Device& dev, const ModelSpec& spec, int batch) {
  if (!spec.is_gpt()) return measure_gemm_flops(dev, spec.mlp(), batch);
  // The transformer's largest forward GEMM: the tied head or the MLP's c_fc, whichever is larger.
  GemmShape best;
  for (const GemmShape& g : spec.step_gemms(batch)) {
    if (g.kind == GemmKind::forward && g.flops() > best.flops()) best = g;
  }
  return measure_gemm_flops(dev, best);
}

}  // namespace dpscale
