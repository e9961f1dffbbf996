// config.cpp — parsing, validation and expansion of sweep configs.
//
// The config's own keys (name, models, modes, world sizes, repeats, ...) are checked here; every
// value that ends up on a trainer's command line is checked by that option's parser from the
// trainer option table, so the words of a refusal are the trainers' own.
#include "harness/sweep/config.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/sweep/config_checks.h"
#include "harness/sweep/placement_axis.h"
#include "core/fnv1a.h"
#include "models/mlp_spec.h"

namespace dpscale {

namespace {

using json = nlohmann::ordered_json;  // keeps the config's order of options

const std::vector<std::string> kTopKeys = {"name",    "description", "models",    "modes",   "world_sizes",
                                           "bucket_caps_mb", "link", "link_dilation", "backend", "timeout_s",
                                           "repeats", "nice", "options", "nodes", "ranks_per_node"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// A JSON value as the text a flag would carry, after checking the JSON type the option's kind
// needs (a config says 512, not "512"). Throws ValueError.
std::string flag_text(const json& v, ValueKind kind) {
  switch (kind) {
    case ValueKind::whole:
      if (!v.is_number_integer()) throw ValueError("must be an integer");
      return v.dump();
    case ValueKind::real:
      if (!v.is_number()) throw ValueError("must be a number");
      return v.is_number_integer() ? v.dump() : format_number(v.get<double>());
    case ValueKind::switch_:
      if (!v.is_boolean()) throw ValueError("must be true or false");
      return v.get<bool>() ? "true" : "false";
    default:
      if (!v.is_string()) throw ValueError("must be a string");
      return v.get<std::string>();
  }
}

struct Parser {
  std::string src;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError(src + ": '" + key + "' " + what);
  }
  // A trainer parser's complaint, joined to the key as the trainer joins it to its flag.
  [[noreturn]] void refuse(const std::string& key, const std::string& complaint) const {
    throw ConfigError(src + ": " + OptionError::named("'" + key + "'", complaint));
  }
  const json& array(const json& j, const char* key) const {
    const json& v = j.at(key);
    if (!v.is_array() || v.empty()) fail(key, "must be a non-empty array");
    return v;
  }
  // The value of `key` checked by trainer option `option_key`'s own parser; returns its text.
  std::string trainer_value(const std::string& key, const json& v, const std::string& option_key) const {
    const TrainerOption& opt = option(option_key);
    std::string text;
    try {
      text = flag_text(v, opt.kind);
      TrainOptions scratch;
      opt.set(scratch, text);
      opt.check_path(text);  // a data file or directory the runs will read: there before they start
    } catch (const ValueError& e) {
      refuse(key, e.what());
    } catch (const OptionError& e) {
      refuse(key, e.complaint());
    }
    return text;
  }
};

}  // namespace

std::string SweepPoint::run_id(const std::string& config_name) const {
  std::string id = config_name + "/" + model + "-" + mode + "-k" + std::to_string(world_size);
  if (bucket_cap_mb) id += "-cap" + format_number(*bucket_cap_mb);
  if (link != "none") id += "-" + link;
  if (nodes > 0) id += "-p" + placement();
  for (const auto& [key, value] : axes) id += "-" + key + "=" + value;
  return id + "-r" + std::to_string(repeat);
}

std::string SweepPoint::placement() const {
  return nodes > 0 ? std::to_string(nodes) + "x" + std::to_string(ranks_per_node) : "";
}

std::string SweepPoint::describe() const {
  std::string d = model + " " + mode + " K=" + std::to_string(world_size);
  if (bucket_cap_mb) d += " cap " + format_number(*bucket_cap_mb) + " MB";
  if (link != "none") d += " " + link;
  if (nodes > 0) d += " " + placement();
  if (const std::string a = describe_axes(settings); !a.empty()) d += " " + a;
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

  if (!j.contains("models")) p.fail("models", "is missing");
  const json& models = p.array(j, "models");
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string key = "models[" + std::to_string(i) + "]";
    if (!models[i].is_string()) p.fail(key, "must be a string");
    const std::string m = models[i].get<std::string>();
    MlpSpec spec;
    try {
      spec = parse_model(m);
    } catch (const InputError& e) {
      p.fail(key, "names an unknown model: " + std::string(e.what()));
    }
    // The same network twice would be measured twice under two names (or one run id).
    for (size_t k = 0; k < c.models.size(); ++k) {
      if (c.models[k] == m) p.fail(key, "repeats model '" + m + "' (models[" + std::to_string(k) + "])");
      if (parse_model(c.models[k]).widths == spec.widths) {
        p.fail(key, "'" + m + "' is the same network as models[" + std::to_string(k) + "] '" + c.models[k] + "'");
      }
    }
    c.models.push_back(m);
  }

  if (!j.contains("modes")) p.fail("modes", "is missing");
  const json& modes = p.array(j, "modes");
  for (size_t i = 0; i < modes.size(); ++i) {
    const std::string key = "modes[" + std::to_string(i) + "]";
    if (!modes[i].is_string()) p.fail(key, "names an unknown mode: must be a string");
    const std::string m = modes[i].get<std::string>();
    if (!find_mode(m)) p.fail(key, "names an unknown mode: '" + m + "' is not one of " + mode_names());
    if (std::find(c.modes.begin(), c.modes.end(), m) != c.modes.end()) p.fail(key, "repeats mode '" + m + "'");
    c.modes.push_back(m);
  }
  const bool any_dp = std::any_of(c.modes.begin(), c.modes.end(), [](const auto& m) { return mode_named(m).data_parallel; });
  const bool bucketed = std::any_of(c.modes.begin(), c.modes.end(),
                                    [](const auto& m) { return option("bucket_cap_mb").accepted_by(mode_named(m).mode); });

  if (j.contains("world_sizes")) {
    const json& ks = p.array(j, "world_sizes");
    for (size_t i = 0; i < ks.size(); ++i) {
      const std::string key = "world_sizes[" + std::to_string(i) + "]";
      if (!ks[i].is_number_integer()) p.fail(key, "must be an integer");
      const long long k = ks[i].get<long long>();
      try {
        parse_whole(ks[i].dump(), 1, kMaxWorldSize);
      } catch (const ValueError& e) {
        p.fail(key, std::string("world size ") + e.what() + "; allowed 1 to " + std::to_string(kMaxWorldSize));
      }
      if (std::find(c.world_sizes.begin(), c.world_sizes.end(), k) != c.world_sizes.end()) {
        p.fail(key, "repeats world size " + std::to_string(k));
      }
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
        const TrainerOption& cap = option("bucket_cap_mb");
        TrainOptions scratch;
        cap.set(scratch, flag_text(caps[i], cap.kind));
        if (std::find(c.bucket_caps_mb.begin(), c.bucket_caps_mb.end(), scratch.bucket_cap_mb) != c.bucket_caps_mb.end()) {
          p.fail(key, "repeats bucket cap " + format_number(scratch.bucket_cap_mb) + " MB");
        }
        c.bucket_caps_mb.push_back(scratch.bucket_cap_mb);
      } catch (const ValueError& e) {
        p.fail(key, std::string("bucket cap ") + e.what());
      } catch (const OptionError& e) {
        p.fail(key, "bucket cap " + e.complaint());
      }
    }
  } else if (bucketed) {
    c.bucket_caps_mb = {TrainOptions{}.bucket_cap_mb};  // PyTorch DDP's default, as the trainer's
  }

  for (const char* key : {"nodes", "ranks_per_node"}) {
    if (!j.contains(key)) continue;
    const json& v = p.array(j, key);
    std::vector<int>& out = std::string(key) == "nodes" ? c.nodes : c.ranks_per_node;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string k = std::string(key) + "[" + std::to_string(i) + "]";
      if (!v[i].is_number_integer()) p.fail(k, "must be an integer");
      try {
        out.push_back(static_cast<int>(parse_whole(v[i].dump(), 1, kMaxWorldSize)));
      } catch (const ValueError& e) {
        p.fail(k, std::string(e.what()) + "; allowed 1 to " + std::to_string(kMaxWorldSize));
      }
      if (std::count(out.begin(), out.end(), out.back()) > 1) p.fail(k, "repeats " + std::to_string(out.back()));
    }
  }
  if (!c.nodes.empty() || !c.ranks_per_node.empty()) {
    if (!any_dp) p.fail(!c.nodes.empty() ? "nodes" : "ranks_per_node", "places ranks, but no mode is data-parallel");
    try {
      for (int k : c.world_sizes) placements_for(c.nodes, c.ranks_per_node, k);
    } catch (const InputError& e) {
      throw ConfigError(source + ": " + e.what());
    }
  }

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
  if (j.contains("repeats")) {
    if (!j["repeats"].is_number_integer()) p.fail("repeats", "must be an integer");
    try {
      c.repeats = static_cast<int>(parse_whole(j["repeats"].dump(), 1, kMaxRepeats));
    } catch (const ValueError& e) {
      p.fail("repeats", std::string(e.what()) + "; allowed 1 to " + std::to_string(kMaxRepeats));
    }
  }

  if (j.contains("nice")) {
    if (!j["nice"].is_number_integer()) p.fail("nice", "must be an integer");
    try {
      c.nice = static_cast<int>(parse_whole(j["nice"].dump(), -20, 19));
    } catch (const ValueError& e) {
      p.fail("nice", std::string(e.what()) + "; allowed -20 to 19");
    }
  }

  if (j.contains("options")) {
    const json& o = j["options"];
    if (!o.is_object()) p.fail("options", "must be an object");
    for (const auto& [key, value] : o.items()) {
      const std::string qkey = "options." + key;
      const TrainerOption* opt = find_option(key);
      if (!opt || opt->config != ConfigUse::options) {
        const bool swept = (opt && opt->config == ConfigUse::sweep) ||
                           std::find(kTopKeys.begin(), kTopKeys.end(), key + "s") != kTopKeys.end() ||
                           std::find(kTopKeys.begin(), kTopKeys.end(), key) != kTopKeys.end();
        std::vector<std::string> known;
        for (const TrainerOption& t : trainer_options()) {
          if (t.config == ConfigUse::options) known.push_back(t.key);
        }
        p.fail(qkey, swept ? "is set by the sweep itself; use the top-level key"
                           : "is not a trainer option (known: " + join(known) + ")");
      }
      const std::string rendered = p.trainer_value(qkey, value, key);
      if (opt->kind == ValueKind::switch_) {
        if (rendered == "false") continue;  // a switch that is off: leave it out
        c.options.push_back({opt, ""});
      } else {
        c.options.push_back({opt, rendered});
      }
    }
  }

  // The axes: a list (or one value) under the option's axis key, each value checked by the
  // option's own parser; an option is swept or set in "options", not both.
  for (const TrainerOption& t : trainer_options()) {
    if (t.axis.empty() || !j.contains(t.axis)) continue;
    for (const TrainerArg& a : c.options) {
      if (a.option == &t) p.fail(t.axis, "sweeps " + t.key + ", which \"options\" also sets: set it in one place");
    }
    const json& v = j[t.axis];
    const json list = v.is_array() ? v : json::array({v});
    if (list.empty()) p.fail(t.axis, "must be a non-empty array");
    ConfigAxis axis{&t, {}};
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = t.axis + "[" + std::to_string(i) + "]";
      std::string text = p.trainer_value(key, list[i], t.key);
      TrainOptions scratch;
      t.set(scratch, text);
      text = t.get(scratch);  // as the key renders it: 4 and 4.0, ring and ring, alike
      if (std::find(axis.values.begin(), axis.values.end(), text) != axis.values.end()) {
        p.fail(key, "repeats " + t.key + " " + text);
      }
      axis.values.push_back(text);
    }
    c.axes.push_back(std::move(axis));
  }

  // Every rank takes an equal shard of the global batch: a world size that does not divide it is
  // refused here, in the trainer's words, instead of failing every run of that size.
  TrainOptions batch;
  for (const TrainerArg& a : c.options) {
    if (a.option->key == std::string("batch_size")) a.option->set(batch, a.value);
  }
  for (size_t i = 0; i < c.world_sizes.size(); ++i) {
    if (any_dp && batch.batch_size % c.world_sizes[i] != 0) {
      p.fail("world_sizes[" + std::to_string(i) + "]",
             "world size " + std::to_string(c.world_sizes[i]) + " does not divide the global batch " +
                 std::to_string(batch.batch_size) + " (options.batch_size; each rank takes an equal shard)");
    }
  }
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

std::string config_hash(const SweepConfig& c) {
  nlohmann::json j = {{"link", c.link}, {"link_dilation", c.link_dilation}, {"backend", c.backend}};
  if (c.nice != 0) j["nice"] = c.nice;  // only when set: configs without it keep their hash
  // The placement axis is a list like world_sizes: left out, so adding a placement and resuming
  // extends a sweep (each point's run id names its placement).
  nlohmann::json opts = nlohmann::json::array();
  for (const TrainerArg& a : c.options) opts.push_back({a.option->key, a.value});
  j["options"] = opts;
  const std::string text = j.dump();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(text.data(), text.size())));
  return hex;
}

namespace {

// Every combination of the axes' values that `mode` takes (axes it does not take: left out, so
// a single run is not repeated once per all-reduce algorithm), in the axes' order.
std::vector<Settings> axis_combinations(const SweepConfig& c, Mode mode) {
  std::vector<Settings> out = {{}};
  for (const ConfigAxis& a : c.axes) {
    if (!a.option->accepted_by(mode)) continue;
    std::vector<Settings> next;
    for (const Settings& s : out) {
      for (const std::string& v : a.values) {
        Settings t = s;
        t.emplace_back(a.option->key, v);
        next.push_back(std::move(t));
      }
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<SweepPoint> expand(const SweepConfig& c, int repeats) {
  const bool has_single = std::any_of(c.modes.begin(), c.modes.end(), [](const auto& m) { return !mode_named(m).data_parallel; });
  std::vector<SweepPoint> runs;
  auto add = [&](SweepPoint p) {
    for (Settings axes : axis_combinations(c, mode_named(p.mode).mode)) {
      p.axes = std::move(axes);
      p.settings = settings_of_args(trainer_args(c, p));
      runs.push_back(p);
    }
  };
  for (int r = 0; r < repeats; ++r) {
    for (const std::string& model : c.models) {
      if (has_single) add({model, mode_name(Mode::single), 1, std::nullopt, "none", r, {}, {}});
      for (int k : c.world_sizes) {
        for (const std::string& mode : c.modes) {
          const ModeInfo& info = mode_named(mode);
          if (!info.data_parallel) continue;
          for (const Placement& pl : placements_for(c.nodes, c.ranks_per_node, k)) {
            if (!option("bucket_cap_mb").accepted_by(info.mode)) {
              add({model, mode, k, std::nullopt, c.link, r, pl.nodes, pl.ranks_per_node});
              continue;
            }
            for (double cap : c.bucket_caps_mb) add({model, mode, k, cap, c.link, r, pl.nodes, pl.ranks_per_node});
          }
        }
      }
    }
  }
  return runs;
}

std::vector<std::string> trainer_args(const SweepConfig& c, const SweepPoint& p) {
  const ModeInfo& mode = mode_named(p.mode);
  std::vector<std::string> a = {option("model").flag, p.model};
  for (const TrainerArg& o : c.options) {
    if (!o.option->accepted_by(mode.mode)) continue;
    a.push_back(o.option->flag);
    if (!o.value.empty()) a.push_back(o.value);
  }
  a.insert(a.end(), {option("backend").flag, c.backend, option("quiet").flag});
  if (option("link").accepted_by(mode.mode) && p.link != "none") {
    a.insert(a.end(), {option("link").flag, p.link, option("link_dilation").flag, c.link_dilation});
  }
  if (p.bucket_cap_mb) a.insert(a.end(), {option("bucket_cap_mb").flag, format_number(*p.bucket_cap_mb)});
  for (const auto& [key, value] : p.axes) {
    const TrainerOption& t = option(key);
    if (!t.accepted_by(mode.mode)) continue;
    if (t.kind != ValueKind::switch_) {
      a.insert(a.end(), {t.flag, value});
    } else if (value == "true") {
      a.push_back(t.flag);
    }
  }
  return a;
}

}  // namespace dpscale
