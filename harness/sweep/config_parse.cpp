// config_parse.cpp — reading a sweep config: the JSON, the top-level keys, and the config's own
// keys (name, models, modes, world sizes and the placement axis, link, backend, timeout,
// repeats, nice). The trainer options and the axes: config_options.cpp; the checks of the whole:
// config_checks.cpp.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>

#include "harness/sweep/config_checks.h"
#include "harness/sweep/config_parser.h"
#include "harness/sweep/placement_axis.h"
#include "models/mlp_spec.h"
#include "models/model_spec.h"

namespace dpscale {

namespace config {

const std::vector<std::string> kTopKeys = {"name",    "description", "models",   "modes",     "world_sizes",
                                           "link",    "link_dilation", "backend", "timeout_s", "repeats",
                                           "nice",    "options",     "nodes",    "ranks_per_node"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void Parser::fail(const std::string& key, const std::string& what) const {
  throw ConfigError(src + ": '" + key + "' " + what);
}

void Parser::refuse(const std::string& key, const std::string& complaint) const {
  throw ConfigError(src + ": " + OptionError::named("'" + key + "'", complaint));
}

const json& Parser::array(const json& j, const char* key) const {
  const json& v = j.at(key);
  if (!v.is_array() || v.empty()) fail(key, "must be a non-empty array");
  return v;
}

int Parser::whole(const std::string& key, const json& v, int lo, int hi) const {
  if (!v.is_number_integer()) fail(key, "must be an integer");
  try {
    return static_cast<int>(parse_whole(v.dump(), lo, hi));
  } catch (const ValueError& e) {
    fail(key, std::string(e.what()) + "; allowed " + std::to_string(lo) + " to " + std::to_string(hi));
  }
}

void parse_names(const json& j, const Parser& p, const std::string& source, SweepConfig& c) {
  const std::string stem = source.substr(source.find_last_of('/') + 1);
  c.name = stem.substr(0, stem.rfind(".json"));
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty()) p.fail("name", "must be a non-empty string");
    c.name = j["name"].get<std::string>();
  }
  if (c.name.find_first_of("/ \t\n") != std::string::npos) p.fail("name", "must not contain '/' or spaces");
  if (j.contains("description")) {
    if (!j["description"].is_string()) p.fail("description", "must be a string");
    c.description = j["description"].get<std::string>();
  }
}

void parse_models(const json& j, const Parser& p, SweepConfig& c) {
  if (!j.contains("models")) p.fail("models", "is missing");
  const json& models = p.array(j, "models");
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string key = "models[" + std::to_string(i) + "]";
    if (!models[i].is_string()) p.fail(key, "must be a string");
    const std::string m = models[i].get<std::string>();
    ModelSpec spec;
    try {
      spec = parse_model_spec(m, 0);
    } catch (const InputError& e) {
      p.fail(key, "names an unknown model: " + std::string(e.what()));
    }
    // The same network twice would be measured twice under two names (or one run id).
    const auto same = [](const ModelSpec& a, const ModelSpec& b) {
      if (a.is_gpt() != b.is_gpt()) return false;
      if (!a.is_gpt()) return a.widths == b.widths;
      const GptSpec &x = *a.gpt, &y = *b.gpt;
      return std::tie(x.layers, x.dim, x.heads, x.vocab, x.context) == std::tie(y.layers, y.dim, y.heads, y.vocab, y.context);
    };
    for (size_t k = 0; k < c.models.size(); ++k) {
      if (c.models[k] == m) p.fail(key, "repeats model '" + m + "' (models[" + std::to_string(k) + "])");
      if (same(parse_model_spec(c.models[k], 0), spec)) {
        p.fail(key, "'" + m + "' is the same network as models[" + std::to_string(k) + "] '" + c.models[k] + "'");
      }
    }
    c.models.push_back(m);
  }
}

void parse_modes(const json& j, const Parser& p, SweepConfig& c) {
  if (!j.contains("modes")) p.fail("modes", "is missing");
  const json& modes = p.array(j, "modes");
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::string key = "modes[" + std::to_string(i) + "]";
    if (!modes[i].is_string()) p.fail(key, "names an unknown mode: must be a string");
    const std::string m = modes[i].get<std::string>();
    const ModeInfo* mode = find_mode(m);
    if (!mode) p.fail(key, "names an unknown mode: '" + m + "' is not one of " + mode_names());
    if (std::find(c.modes.begin(), c.modes.end(), mode->mode) != c.modes.end()) p.fail(key, "repeats mode '" + m + "'");
    c.modes.push_back(mode->mode);
  }
}

namespace {

bool any_data_parallel(const SweepConfig& c) {
  return std::any_of(c.modes.begin(), c.modes.end(), [](ModeRef m) { return m->data_parallel; });
}

// j[key], a list of distinct whole numbers in 1..kMaxWorldSize; `what` names one in a refusal.
std::vector<int> distinct_sizes(const json& j, const Parser& p, const char* key, const std::string& what) {
  std::vector<int> out;
  const json& v = p.array(j, key);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string k = std::string(key) + "[" + std::to_string(i) + "]";
    if (!v[i].is_number_integer()) p.fail(k, "must be an integer");
    try {
      out.push_back(static_cast<int>(parse_whole(v[i].dump(), 1, kMaxWorldSize)));
    } catch (const ValueError& e) {
      p.fail(k, what + e.what() + "; allowed 1 to " + std::to_string(kMaxWorldSize));
    }
    if (std::count(out.begin(), out.end(), out.back()) > 1) p.fail(k, "repeats " + what + std::to_string(out.back()));
  }
  return out;
}

}  // namespace

void parse_world_sizes(const json& j, const Parser& p, SweepConfig& c) {
  const bool any_dp = any_data_parallel(c);
  if (j.contains("world_sizes")) {
    c.world_sizes = distinct_sizes(j, p, "world_sizes", "world size ");
  } else if (any_dp) {
    p.fail("world_sizes", "is missing (the data-parallel modes need it)");
  }
  if (j.contains("nodes")) c.nodes = distinct_sizes(j, p, "nodes", "");
  if (j.contains("ranks_per_node")) c.ranks_per_node = distinct_sizes(j, p, "ranks_per_node", "");
  if (!c.nodes.empty() || !c.ranks_per_node.empty()) {
    if (!any_dp) p.fail(!c.nodes.empty() ? "nodes" : "ranks_per_node", "places ranks, but no mode is data-parallel");
    try {
      for (int k : c.world_sizes) placements_for(c.nodes, c.ranks_per_node, k);
    } catch (const InputError& e) {
      throw ConfigError(p.src + ": " + e.what());
    }
  }
}

void parse_run_keys(const json& j, const Parser& p, SweepConfig& c) {
  // Top-level keys that set trainer flags: the trainers' parsers check them. A dilation may be
  // written as a number.
  if (j.contains("link")) c.link = p.trainer_value("link", j["link"], "link");
  if (j.contains("link_dilation")) {
    const json& d = j["link_dilation"];
    c.link_dilation = p.trainer_value("link_dilation", d.is_number() ? json(format_number(d.get<double>())) : d,
                                      "link_dilation");
  }
  if (j.contains("backend")) c.backend = p.trainer_value("backend", j["backend"], "backend");

  if (j.contains("timeout_s")) {
    if (!j["timeout_s"].is_number()) p.fail("timeout_s", "must be a number");
    try {
      c.timeout_s = parse_real(format_number(j["timeout_s"].get<double>()), {0.0, false}, {kMaxTimeoutS});
    } catch (const ValueError& e) {
      p.fail("timeout_s", std::string(e.what()) + "; allowed above 0 up to " + format_number(kMaxTimeoutS) + " s");
    }
  }
  if (j.contains("repeats")) c.repeats = p.whole("repeats", j["repeats"], 1, kMaxRepeats);
  if (j.contains("nice")) c.nice = p.whole("nice", j["nice"], -20, 19);
}

}  // namespace config

SweepConfig parse_config(const std::string& text, const std::string& source) {
  using namespace config;
  const Parser p{source};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    if (auto at = msg.find("] "); at != std::string::npos) msg = msg.substr(at + 2);
    throw ConfigError(source + ": not valid JSON: " + msg);
  } catch (const json::exception&) {  // a number beyond a double's range (out_of_range 406)
    throw ConfigError(source + ": not valid JSON: a number out of range");
  }
  if (!j.is_object()) throw ConfigError(source + ": a config must be a JSON object");
  std::vector<std::string> top_keys = kTopKeys;
  for (const TrainerOption& t : trainer_options()) {
    if (!t.axis.empty()) top_keys.push_back(t.axis);
  }
  for (const auto& [key, _] : j.items()) {
    if (std::find(top_keys.begin(), top_keys.end(), key) == top_keys.end()) {
      const TrainerOption* opt = find_option(key);
      const bool is_option = opt && opt->config == ConfigUse::options;
      p.fail(key, std::string("is not a config key") +
                      (is_option ? " (trainer options go inside \"options\")" : " (known: " + join(top_keys) + ")"));
    }
  }

  SweepConfig c;
  parse_names(j, p, source, c);
  parse_models(j, p, c);
  parse_modes(j, p, c);
  parse_world_sizes(j, p, c);
  parse_run_keys(j, p, c);
  parse_options(j, p, c);
  parse_axes(j, p, c);
  check_batch_split(p, c);
  std::vector<std::string> given;
  for (const auto& [key, _] : j.items()) given.push_back(key);
  check_keys_taken(c, given, source);
  check_every_run(c, source);
  return c;
}

SweepConfig load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot read the config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

}  // namespace dpscale
