// point_json.cpp — the point object in JSON, both ways, and its schema (one table of fields, from
// which the JSON Schema and the documentation's table are rendered).
#include <stdexcept>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "contract/trainer_options.h"
#include "core/json_int.h"
#include "harness/point/point.h"

namespace dpscale {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The point object's fields: name, JSON Schema, meaning. The settings' schema is built from the
// option table below.
struct Field {
  const char* name;
  ordered_json schema;
  const char* meaning;
};

const std::vector<Field>& fields() {
  static const std::vector<Field> f = [] {
    ordered_json modes = ordered_json::array();
    for (const ModeInfo& m : all_modes()) modes.push_back(m.name);
    return std::vector<Field>{
        {"model", {{"type", "string"}, {"minLength", 1}},
         "the config's text: a preset (`small`) or widths (`784,256,10`); a bare record's custom model by its widths"},
        {"mode", {{"enum", modes}}, "the mode (contract/modes.cpp): which trainer ran"},
        {"world_size", {{"type", "integer"}, {"minimum", 1}}, "K, the ranks"},
        {"nodes", {{"type", "integer"}, {"minimum", 1}},
         "with `ranks_per_node`, only where the sweep asked for a placement: nodes × ranks per node = `world_size`"},
        {"ranks_per_node", {{"type", "integer"}, {"minimum", 1}}, "ranks per node of the placement asked for"},
        {"settings", {{"type", "object"}},
         "`{option key: value}` of every trainer option that changes the measurement and the mode takes (the "
         "option table's `measured`; `bucket_cap_mb` and `link` among them), as the option renders it: "
         "`\"bucket_cap_mb\": \"25\"`, `\"tf32\": \"false\"`. An option the run was not given has its default"},
    };
  }();
  return f;
}

ordered_json settings_schema() {
  const TrainOptions defaults;
  ordered_json props = ordered_json::object();
  for (const auto& [key, _] : default_settings()) {
    const TrainerOption& t = option(key);
    ordered_json s = {{"type", "string"}, {"default", t.get(defaults)}, {"description", t.help}};
    if (!t.choices.empty()) s["enum"] = t.choices;
    if (t.kind == ValueKind::switch_) s["enum"] = {"false", "true"};
    props[key] = s;
  }
  return {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
}

// `value` of setting `key` as the option renders it, checked by the option's own parser.
std::string checked_setting(const std::string& key, const json& value, const std::string& where) {
  if (!value.is_string()) throw std::runtime_error("'" + where + "' has the wrong type (want a string)");
  TrainOptions scratch;
  try {
    option(key).set(scratch, value.get<std::string>());
  } catch (const std::exception& e) {
    throw std::runtime_error("'" + where + "' is refused: " + e.what());
  }
  return option(key).get(scratch);
}

void set_setting(Settings& s, const std::string& key, const json& value, const std::string& where) {
  for (auto& [k, v] : s) {
    if (k == key) {
      v = checked_setting(key, value, where);
      return;
    }
  }
  throw std::runtime_error("'" + where + "' is no setting of a point (no measured trainer option)");
}

}  // namespace

Point Point::from_json(const json& j, const std::vector<std::string>& argv) {
  if (!j.is_object()) throw std::runtime_error("'point' is not an object");
  Point p;
  p.model = json_field<std::string>(j, "point", "model");
  const std::string mode = json_field<std::string>(j, "point", "mode");
  const ModeInfo* m = find_mode(mode);
  if (!m) throw std::runtime_error("'point.mode' '" + mode + "' is not one of " + mode_names());
  p.mode = m->mode;
  p.world_size = json_field<int>(j, "point", "world_size");
  if (p.world_size < 1) throw std::runtime_error("'point.world_size' is not positive");
  if (j.contains("nodes") || j.contains("ranks_per_node")) {
    p.nodes = json_field<int>(j, "point", "nodes");
    p.ranks_per_node = json_field<int>(j, "point", "ranks_per_node");
    if (p.nodes < 1 || p.ranks_per_node < 1 || p.nodes * p.ranks_per_node != p.world_size) {
      throw std::runtime_error("'point.nodes' x 'point.ranks_per_node' is not 'point.world_size'");
    }
  }
  if (j.contains("settings")) {
    if (!j.at("settings").is_object()) throw std::runtime_error("'point.settings' is not an object");
    for (const auto& [key, value] : j.at("settings").items()) set_setting(p.settings, key, value, "point.settings." + key);
  } else {
    p.settings = settings_of_argv(argv);
    // Sweep lines of older sweeps named the cap and the link beside the model.
    if (j.contains("bucket_cap_mb") && !j.at("bucket_cap_mb").is_null()) {
      const double cap = json_field<double>(j, "point", "bucket_cap_mb");
      set_setting(p.settings, "bucket_cap_mb", format_number(cap), "point.bucket_cap_mb");
    }
    if (j.contains("link")) set_setting(p.settings, "link", j.at("link"), "point.link");
  }
  // A trainer never runs with an option its mode does not take: such a value is the default.
  p.settings = p.beside(p.mode, p.world_size).settings;
  return p;
}

ordered_json Point::to_json(bool with_settings) const {
  ordered_json j;
  j["model"] = model;
  j["mode"] = mode.name();
  j["world_size"] = world_size;
  if (nodes > 0) {
    j["nodes"] = nodes;
    j["ranks_per_node"] = ranks_per_node;
  }
  if (with_settings) {
    ordered_json s = ordered_json::object();
    for (const auto& [key, value] : settings) {
      if (takes(key)) s[key] = value;
    }
    j["settings"] = s;
  }
  return j;
}

ordered_json point_schema() {
  ordered_json props = ordered_json::object();
  for (const Field& f : fields()) {
    props[f.name] = f.schema;
    props[f.name]["description"] = f.meaning;
  }
  props["settings"] = settings_schema();
  props["settings"]["description"] = fields().back().meaning;
  // Per mode: its settings are exactly the options it takes.
  ordered_json per_mode = ordered_json::array();
  for (const ModeInfo& m : all_modes()) {
    ordered_json taken = ordered_json::array();
    for (const auto& [key, _] : default_settings()) {
      if (option(key).accepted_by(m.mode)) taken.push_back(key);
    }
    per_mode.push_back({{"if", {{"properties", {{"mode", {{"const", m.name}}}}}}},
                        {"then", {{"properties", {{"settings", {{"required", taken}, {"propertyNames", {{"enum", taken}}}}}}}}}});
  }
  return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
          {"title", "dpscale point"},
          {"type", "object"},
          {"properties", props},
          {"required", {"model", "mode", "world_size", "settings"}},
          {"dependentRequired", {{"nodes", {"ranks_per_node"}}, {"ranks_per_node", {"nodes"}}}},
          {"allOf", per_mode},
          {"additionalProperties", false}};
}

std::string point_fields_markdown() {
  std::string md = "| field | type | meaning |\n|---|---|---|\n";
  for (const Field& f : fields()) {
    const std::string type = f.schema.contains("type") ? f.schema["type"].get<std::string>() : "string";
    md += std::string("| `") + f.name + "` | " + type + " | " + f.meaning + " |\n";
  }
  return md;
}

}  // namespace dpscale
