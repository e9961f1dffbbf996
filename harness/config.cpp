// config.cpp — parsing, validation and expansion of sweep configs.
#include "config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "models/mlp_spec.h"

namespace dpscale {

namespace {

using json = nlohmann::ordered_json;  // keeps the config's order of options

const std::vector<std::string> kModes = {"single", "naive", "interleaved", "bucketed"};

// One base option: its flag, which executables accept it, and the check of its value.
struct OptionRule {
  std::string flag;
  std::string scope;  // all | dp | naive | bucketed
  std::function<std::string(const json&)> render;  // throws std::string (the complaint)
};

std::string need_int(const json& v, long long lo) {
  if (!v.is_number_integer()) throw std::string("must be an integer");
  const long long n = v.get<long long>();
  if (n < lo) throw "must be at least " + std::to_string(lo) + " (got " + std::to_string(n) + ")";
  return std::to_string(n);
}
std::string need_number(const json& v, double lo, bool lo_open, double hi = INFINITY) {
  if (!v.is_number()) throw std::string("must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || (lo_open ? x <= lo : x < lo) || x >= hi) {
    std::string range = (lo_open ? "> " : ">= ") + format_number(lo);
    if (std::isfinite(hi)) range += " and < " + format_number(hi);
    throw "must be " + range + " (got " + format_number(x) + ")";
  }
  return format_number(x);
}
std::string need_string(const json& v, const std::vector<std::string>& allowed = {}) {
  if (!v.is_string() || v.get<std::string>().empty()) throw std::string("must be a non-empty string");
  const std::string s = v.get<std::string>();
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : " | ") + a;
    throw "'" + s + "' is not one of " + list;
  }
  return s;
}

// The config's "options" keys: the trainer flags (trainers/options.cpp) a sweep may set.
const std::map<std::string, OptionRule>& option_rules() {
  static const std::map<std::string, OptionRule> r = {
      {"samples", {"--samples", "all", [](const json& v) { return need_int(v, 0); }}},
      {"batch_size", {"--batch-size", "all", [](const json& v) { return need_int(v, 1); }}},
      {"epochs", {"--epochs", "all", [](const json& v) { return need_int(v, 1); }}},
      {"lr", {"--lr", "all", [](const json& v) { return need_number(v, 0, true); }}},
      {"momentum", {"--momentum", "all", [](const json& v) { return need_number(v, 0, false, 1); }}},
      {"weight_decay", {"--weight-decay", "all", [](const json& v) { return need_number(v, 0, false); }}},
      {"warmup_steps", {"--warmup-steps", "all", [](const json& v) { return need_int(v, 0); }}},
      {"max_steps", {"--max-steps", "all", [](const json& v) { return need_int(v, 0); }}},
      {"seed", {"--seed", "all", [](const json& v) { return need_int(v, 0); }}},
      {"threads", {"--threads", "all", [](const json& v) { return need_int(v, 1); }}},
      {"data", {"--data", "all", [](const json& v) { return need_string(v, {"synthetic", "fashion-mnist", "npy"}); }}},
      {"data_dir", {"--data-dir", "all", [](const json& v) { return need_string(v); }}},
      {"features", {"--features", "all", [](const json& v) { return need_string(v); }}},
      {"labels", {"--labels", "all", [](const json& v) { return need_string(v); }}},
      {"tf32", {"--tf32", "all", [](const json& v) -> std::string {
                  if (!v.is_boolean()) throw std::string("must be true or false");
                  return v.get<bool>() ? "" : "off";
                }}},
      {"allreduce", {"--allreduce", "dp", [](const json& v) { return need_string(v, {"native", "ring", "star"}); }}},
      {"fused", {"--fused", "naive", [](const json& v) -> std::string {
                   if (!v.is_boolean()) throw std::string("must be true or false");
                   return v.get<bool>() ? "" : "off";
                 }}},
      {"first_bucket_mb", {"--first-bucket-mb", "bucketed", [](const json& v) { return need_number(v, 0, true); }}},
  };
  return r;
}

const std::vector<std::string> kTopKeys = {"name",    "description", "models",    "modes",   "world_sizes",
                                           "bucket_caps_mb", "link", "link_dilation", "backend", "timeout_s",
                                           "repeats", "options"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// --link values the trainers accept (comm/link_model.h): a preset or ALPHA_US:GBPS.
bool valid_link(const std::string& s) {
  static const std::set<std::string> presets = {"none", "nvlink", "pcie4", "ib100", "eth10"};
  static const std::regex custom(R"(\d+(\.\d+)?:\d+(\.\d+)?)");
  return presets.count(s) || std::regex_match(s, custom);
}
bool valid_dilation(const std::string& s) {
  static const std::regex form(R"((auto:)?\d+(\.\d+)?([eE][+-]?\d+)?)");
  if (!std::regex_match(s, form)) return false;
  const double x = std::stod(s.substr(s.rfind(':') == std::string::npos ? 0 : s.rfind(':') + 1));
  return x > 0;
}

struct Parser {
  std::string src;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(src + ": '" + key + "' " + what);
  }
  const json& array(const json& j, const char* key) const {
    const json& v = j.at(key);
    if (!v.is_array() || v.empty()) fail(key, "must be a non-empty array");
    return v;
  }
};

}  // namespace

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string trainer_executable(const std::string& mode) {
  if (mode == "naive") return "train_dp_naive";
  if (mode == "interleaved") return "train_dp_interleaved";
  if (mode == "bucketed") return "train_ddp_bucketed";
  return "train_single_gpu";
}

std::string SweepPoint::run_id(const std::string& config_name) const {
  std::string id = config_name + "/" + model + "-" + mode + "-k" + std::to_string(world_size);
  if (bucket_cap_mb) id += "-cap" + format_number(*bucket_cap_mb);
  if (link != "none") id += "-" + link;
  return id + "-r" + std::to_string(repeat);
}

std::string SweepPoint::describe() const {
  std::string d = model + " " + mode + " K=" + std::to_string(world_size);
  if (bucket_cap_mb) d += " cap " + format_number(*bucket_cap_mb) + " MB";
  if (link != "none") d += " " + link;
  return d;
}

SweepConfig parse_config(const std::string& text, const std::string& source) {
  const Parser p{source};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    if (auto at = msg.find("] "); at != std::string::npos) msg = msg.substr(at + 2);
    throw ConfigError(source + ": not valid JSON: " + msg);
  }
  if (!j.is_object()) throw ConfigError(source + ": a config must be a JSON object");
  for (const auto& [key, _] : j.items()) {
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
      const bool is_option = option_rules().count(key) > 0;
      p.fail(key, std::string("is not a config key") +
                      (is_option ? " (trainer options go inside \"options\")" : " (known: " + join(kTopKeys) + ")"));
    }
  }

  SweepConfig c;
  const std::string stem = source.substr(source.find_last_of('/') + 1);
  c.name = stem.substr(0, stem.rfind(".json"));
  try {
    if (j.contains("name")) c.name = need_string(j["name"]);
  } catch (const std::string& why) {
    p.fail("name", why);
  }
  if (c.name.find_first_of("/ \t\n") != std::string::npos) p.fail("name", "must not contain '/' or spaces");
  if (j.contains("description")) {
    if (!j["description"].is_string()) p.fail("description", "must be a string");
    c.description = j["description"].get<std::string>();
  }

  if (!j.contains("models")) p.fail("models", "is missing");
  const json& models = p.array(j, "models");
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string key = "models[" + std::to_string(i) + "]";
    if (!models[i].is_string()) p.fail(key, "must be a string");
    const std::string m = models[i].get<std::string>();
    try {
      parse_model(m);
    } catch (const InputError& e) {
      p.fail(key, "names an unknown model: " + std::string(e.what()));
    }
    c.models.push_back(m);
  }

  if (!j.contains("modes")) p.fail("modes", "is missing");
  const json& modes = p.array(j, "modes");
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::string key = "modes[" + std::to_string(i) + "]";
    try {
      const std::string m = need_string(modes[i], kModes);
      if (std::find(c.modes.begin(), c.modes.end(), m) != c.modes.end()) p.fail(key, "repeats mode '" + m + "'");
      c.modes.push_back(m);
    } catch (const std::string& why) {
      p.fail(key, "names an unknown mode: " + why);
    }
  }
  const bool any_dp = std::any_of(c.modes.begin(), c.modes.end(), [](const auto& m) { return m != "single"; });
  const bool bucketed = std::find(c.modes.begin(), c.modes.end(), "bucketed") != c.modes.end();

  if (j.contains("world_sizes")) {
    const json& ks = p.array(j, "world_sizes");
    for (size_t i = 0; i < ks.size(); ++i) {
      const std::string key = "world_sizes[" + std::to_string(i) + "]";
      if (!ks[i].is_number_integer()) p.fail(key, "must be an integer");
      const long long k = ks[i].get<long long>();
      if (k < 1) p.fail(key, "world size must be at least 1 (got " + std::to_string(k) + ")");
      if (k > 4096) p.fail(key, "world size " + std::to_string(k) + " is implausibly large");
      c.world_sizes.push_back(static_cast<int>(k));
    }
  } else if (any_dp) {
    p.fail("world_sizes", "is missing (the data-parallel modes need it)");
  }

  if (j.contains("bucket_caps_mb")) {
    const json& caps = p.array(j, "bucket_caps_mb");
    for (size_t i = 0; i < caps.size(); ++i) {
      const std::string key = "bucket_caps_mb[" + std::to_string(i) + "]";
      try {
        need_number(caps[i], 0, true);
      } catch (const std::string& why) {
        p.fail(key, "bucket cap " + why);
      }
      c.bucket_caps_mb.push_back(caps[i].get<double>());
    }
  } else if (bucketed) {
    c.bucket_caps_mb = {25.0};  // PyTorch DDP's default
  }

  auto str_key = [&](const char* key, std::string& out, const std::function<bool(const std::string&)>& ok,
                     const char* expect) {
    if (!j.contains(key)) return;
    const json& v = j[key];
    std::string s;
    if (v.is_string()) s = v.get<std::string>();
    else if (v.is_number() && std::string(key) == "link_dilation") s = format_number(v.get<double>());
    else p.fail(key, "must be a string");
    if (!ok(s)) p.fail(key, "'" + s + "' is not " + expect);
    out = s;
  };
  str_key("link", c.link, valid_link, "a link: none | nvlink | pcie4 | ib100 | eth10 | ALPHA_US:GBPS");
  str_key("link_dilation", c.link_dilation, valid_dilation, "a dilation: a number > 0 or auto:TFLOPS");
  str_key("backend", c.backend, [](const std::string& s) { return s == "auto" || s == "cpu" || s == "cuda"; },
          "a backend: auto | cpu | cuda");

  if (j.contains("timeout_s")) {
    try {
      need_number(j["timeout_s"], 0, true);
    } catch (const std::string& why) {
      p.fail("timeout_s", why);
    }
    c.timeout_s = j["timeout_s"].get<double>();
  }
  if (j.contains("repeats")) {
    try {
      c.repeats = std::stoi(need_int(j["repeats"], 1));
    } catch (const std::string& why) {
      p.fail("repeats", why);
    }
  }

  if (j.contains("options")) {
    const json& o = j["options"];
    if (!o.is_object()) p.fail("options", "must be an object");
    for (const auto& [key, value] : o.items()) {
      const std::string qkey = "options." + key;
      auto rule = option_rules().find(key);
      if (rule == option_rules().end()) {
        const bool top = std::find(kTopKeys.begin(), kTopKeys.end(), key + "s") != kTopKeys.end() ||
                         std::find(kTopKeys.begin(), kTopKeys.end(), key) != kTopKeys.end() || key == "bucket_cap_mb";
        std::vector<std::string> known;
        for (const auto& [k, _] : option_rules()) known.push_back(k);
        p.fail(qkey, top ? "is set by the sweep itself; use the top-level key"
                         : "is not a trainer option (known: " + join(known) + ")");
      }
      std::string rendered;
      try {
        rendered = rule->second.render(value);
      } catch (const std::string& why) {
        p.fail(qkey, why);
      }
      if (rendered == "off") continue;  // a boolean flag that is false: leave it out
      c.options.push_back({key, rule->second.flag, rendered, rule->second.scope});
    }
  }
  return c;
}

SweepConfig load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot read the config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

std::vector<SweepPoint> expand(const SweepConfig& c, int repeats) {
  std::vector<SweepPoint> runs;
  for (int r = 0; r < repeats; ++r) {
    for (const std::string& model : c.models) {
      if (std::find(c.modes.begin(), c.modes.end(), "single") != c.modes.end()) {
        runs.push_back({model, "single", 1, std::nullopt, "none", r});
      }
      for (int k : c.world_sizes) {
        for (const std::string& mode : c.modes) {
          if (mode == "single") continue;
          if (mode != "bucketed") {
            runs.push_back({model, mode, k, std::nullopt, c.link, r});
            continue;
          }
          for (double cap : c.bucket_caps_mb) runs.push_back({model, mode, k, cap, c.link, r});
        }
      }
    }
  }
  return runs;
}

std::vector<std::string> trainer_args(const SweepConfig& c, const SweepPoint& p) {
  std::vector<std::string> a = {"--model", p.model};
  const bool dp = p.mode != "single";
  for (const TrainerArg& o : c.options) {
    const bool accepted = o.scope == "all" || (o.scope == "dp" && dp) || o.scope == p.mode;
    if (!accepted) continue;
    a.push_back(o.flag);
    if (!o.value.empty()) a.push_back(o.value);
  }
  a.insert(a.end(), {"--backend", c.backend, "--quiet"});
  if (dp && p.link != "none") a.insert(a.end(), {"--link", p.link, "--link-dilation", c.link_dilation});
  if (p.bucket_cap_mb) a.insert(a.end(), {"--bucket-cap-mb", format_number(*p.bucket_cap_mb)});
  return a;
}

}  // namespace dpscale
