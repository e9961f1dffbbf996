// mlp_spec.h — the shape of an MLP: layer widths, the workshop's presets, parameter counts.
//
// widths = [in, h1, ..., out]; layer i is Linear(widths[i] -> widths[i+1]) with ReLU after every
// layer but the last. Presets are exactly the workshop's (model_common.py plus xlarge).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpscale {

struct MlpSpec {
  std::string name;          // preset name, or "custom"
  std::vector<int> widths;   // [in, hidden..., out]

  int n_layers() const { return static_cast<int>(widths.size()) - 1; }
  int in_width() const { return widths.front(); }
  int out_width() const { return widths.back(); }
  int64_t n_params() const;
  int max_width() const;
  // The name results go by: model_key(name, widths).
  std::string key() const;
};

// The preset names in order: small, medium, large, xlarge.
const std::vector<std::string>& preset_names();

// "small" | "medium" | "large" | "xlarge" | "784,256,10". Throws InputError naming the problem.
MlpSpec parse_model(const std::string& text);

// "784,1024,512,256,10" style rendering of widths.
std::string widths_to_string(const std::vector<int>& widths);

// The name a model goes by in results and their keys: its preset name, or for a custom one its
// widths as a config names it ("784,256,10"), so a record's ("custom" and widths) and a config's
// text agree.
std::string model_key(const std::string& name, const std::vector<int>& widths);

}  // namespace dpscale
