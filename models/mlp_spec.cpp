// mlp_spec.cpp — presets and parsing of --model.
#include "mlp_spec.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "core/errors.h"

namespace dpscale {

namespace {
const std::map<std::string, std::vector<int>>& presets() {
  static const std::map<std::string, std::vector<int>> p = {
      {"small", {784, 1024, 512, 256, 10}},
      {"medium", {784, 2048, 2048, 1024, 512, 10}},
      {"large", {784, 4096, 4096, 2048, 2048, 1024, 512, 10}},
      {"xlarge", {784, 4096, 4096, 4096, 2048, 2048, 1024, 512, 10}},
  };
  return p;
}
constexpr int kMaxWidth = 1 << 16;  // guards against typos like 7840000
constexpr int kMaxLayers = 64;
}  // namespace

int64_t MlpSpec::n_params() const {
  int64_t n = 0;
  for (int i = 0; i < n_layers(); ++i) {
    n += static_cast<int64_t>(widths[i]) * widths[i + 1] + widths[i + 1];
  }
  return n;
}

int MlpSpec::max_width() const { return *std::max_element(widths.begin(), widths.end()); }

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"small", "medium", "large", "xlarge"};
  return names;
}

MlpSpec parse_model(const std::string& text) {
  auto it = presets().find(text);
  if (it != presets().end()) return MlpSpec{text, it->second};

  if (text.find(',') == std::string::npos) {
    throw OptionError("--model", "unknown preset '" + text +
                                      "' (use small, medium, large, xlarge, or a width list like 784,256,10)");
  }
  std::vector<int> widths;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    int v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size()) {
      throw OptionError("--model", "malformed width list '" + text + "': '" + item + "' is not a whole number");
    }
    if (v < 1 || v > kMaxWidth) {
      throw OptionError("--model", "width " + item + " in '" + text + "' is out of range 1.." + std::to_string(kMaxWidth));
    }
    widths.push_back(v);
    pos = end + 1;
  }
  if (widths.size() < 2) {
    throw OptionError("--model", "'" + text + "' needs at least two widths (input and output)");
  }
  if (static_cast<int>(widths.size()) - 1 > kMaxLayers) {
    throw OptionError("--model", "'" + text + "' has more than " + std::to_string(kMaxLayers) + " layers");
  }
  if (widths.back() < 2) {
    throw OptionError("--model", "output width must be at least 2 classes in '" + text + "'");
  }
  return MlpSpec{"custom", widths};
}

std::string widths_to_string(const std::vector<int>& widths) {
  std::string s;
  for (size_t i = 0; i < widths.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(widths[i]);
  }
  return s;
}

std::string model_key(const std::string& name, const std::vector<int>& widths) {
  return name == "custom" ? widths_to_string(widths) : name;
}

std::string MlpSpec::key() const { return model_key(name, widths); }

}  // namespace dpscale
