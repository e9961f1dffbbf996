// link_model.cpp — presets and parsing of the α-β link model.
#include "link_model.h"


#include "core/errors.h"
#include "option_values.h"

namespace dpscale {

double LinkModel::ring_seconds(size_t nbytes, int k) const {
  return modelled_seconds(AllreduceAlgo::ring, *this, nbytes, NodeShape{1, k});
}

double LinkModel::star_seconds(size_t nbytes, int k) const {
  return modelled_seconds(AllreduceAlgo::star, *this, nbytes, NodeShape{1, k});
}

const std::vector<LinkPreset>& link_presets() {
  static const std::vector<LinkPreset> presets = {
      {"nvlink", 1.0, 300.0, "NVLink between GPUs of one node"},
      {"pcie4", 10.0, 25.0, "PCIe 4.0 x16"},
      {"ib100", 5.0, 12.5, "100 Gb/s InfiniBand"},
      {"eth10", 50.0, 1.25, "10 Gb/s Ethernet"}};
  return presets;
}

std::string link_preset_names(const std::string& sep) {
  std::string out;
  for (const LinkPreset& p : link_presets()) out += (out.empty() ? "" : sep) + p.name;
  return out;
}

std::string link_presets_markdown() {
  std::string md = "| `--link` | α per hop | β | stands for |\n|---|---|---|---|\n";
  md += "| `none` | — | — | no emulation: the real all-reduce only |\n";
  for (const LinkPreset& p : link_presets()) {
    md += "| `" + p.name + "` | " + format_number(p.alpha_us) + " µs | " + format_number(p.gbps) + " GB/s | " + p.what +
          " |\n";
  }
  md += "| `ALPHA_US:GBPS` | your α in µs | your β in GB/s | any other link |\n";
  md += "| `intra=SPEC,inter=SPEC[,ranks-per-node=L]` | per tier | per tier | two tiers: inside a node, between nodes |\n";
  return md;
}

LinkModel parse_link(const std::string& spec) {
  if (spec.find('=') != std::string::npos) return parse_two_tier_link(spec);  // intra=...,inter=...
  if (spec == "none") return LinkModel{};
  for (const LinkPreset& p : link_presets()) {
    if (p.name == spec) return LinkModel{spec, p.alpha_us, p.gbps, 1.0};
  }
  const auto colon = spec.find(':');
  if (colon == std::string::npos) {
    throw OptionError("--link", "unknown link '" + spec + "' (use none, " + link_preset_names(", ") + " or ALPHA_US:GBPS)");
  }
  LinkModel m{"custom", 0.0, 0.0, 1.0};
  try {
    m.alpha_us = parse_real(spec.substr(0, colon), {0.0}, {kMaxAlphaUs});
  } catch (const ValueError& e) {
    throw OptionError("--link", "latency (microseconds) in '" + spec + "' " + e.what());
  }
  try {
    m.gbps = parse_real(spec.substr(colon + 1), {kMinGbps}, {kMaxGbps});
  } catch (const ValueError& e) {
    throw OptionError("--link", "bandwidth (GB/s) in '" + spec + "' " + e.what());
  }
  return m;
}

DilationSpec parse_dilation(const std::string& spec) {
  DilationSpec d;
  const bool is_auto = spec.rfind("auto:", 0) == 0;
  const std::string number = is_auto ? spec.substr(5) : spec;
  double v = 0.0;
  try {
    v = parse_real(number, {0.0, false});
  } catch (const ValueError& e) {
    throw OptionError("--link-dilation", std::string(is_auto ? "auto:TFLOPS " : "") + e.what() +
                                             " (a factor F, or auto:TFLOPS)");
  }
  if (is_auto) {
    if (v > kMaxAutoTflops) throw OptionError("--link-dilation", "'" + spec + "' is above auto:1e4 TFLOPS");
    d.auto_tflops = v;
    return d;
  }
  // No machine is a million times slower than the GPU it stands for (auto: gives ~1e2 to 1e4);
  // a larger F is a typo that would hold every all-reduce for hours.
  if (v > kMaxDilation) throw OptionError("--link-dilation", "'" + spec + "' is above 1e6");
  d.factor = v;
  return d;
}

double modelled_seconds(AllreduceAlgo algo, const LinkModel& link, size_t nbytes, int k) {
  if (link.two_tier && link.ranks_per_node > 0 && k % link.ranks_per_node == 0) {
    return modelled_seconds(algo, link, nbytes, NodeShape{k / link.ranks_per_node, link.ranks_per_node});
  }
  return modelled_seconds(algo, link, nbytes, NodeShape{1, k});
}

}  // namespace dpscale
