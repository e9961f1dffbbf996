// schema_doc.cpp — Markdown and JSON views of the mode, option and record tables.
#include "schema_doc.h"

#include "contract/modes.h"
#include "contract/record.h"
#include "contract/trainer_options.h"

namespace dpscale {

namespace {

// A Markdown table cell: a literal '|' would end the cell.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::whole: return "int";
    case ValueKind::real: return "float";
    case ValueKind::choice: return "choice";
    case ValueKind::switch_: return "switch";
    default: return "string";
  }
}

const char* config_use_name(ConfigUse u) {
  switch (u) {
    case ConfigUse::options: return "options";
    case ConfigUse::sweep: return "sweep";
    default: return "never";
  }
}

}  // namespace

std::string record_fields_markdown() {
  std::string md = "| field | type | meaning |\n|---|---|---|\n";
  for (const RecordField& f : record_fields()) {
    md += "| `" + f.name + "` | " + cell(f.type) + " | " + cell(f.meaning) + " |\n";
  }
  return md;
}

std::string trainer_options_markdown() {
  const TrainOptions defaults;
  std::string md = "| option | default | trainers | meaning |\n|---|---|---|---|\n";
  for (const TrainerOption& t : trainer_options()) {
    std::string def = t.kind == ValueKind::switch_ ? (t.get(defaults) == "true" ? "on" : "off") : t.get(defaults);
    if (!def.empty()) def = "`" + def + "`";
    std::string who;
    if (t.modes.size() == all_modes().size()) {
      who = "all";
    } else {
      bool dp = true;
      for (const ModeInfo& m : all_modes()) dp = dp && t.accepted_by(m.mode) == m.data_parallel;
      if (dp) {
        who = "data-parallel";
      } else {
        for (Mode m : t.modes) who += (who.empty() ? "" : ", ") + std::string(mode_name(m));
      }
    }
    md += "| `" + t.flag + "` | " + cell(def) + " | " + who + " | " + cell(t.help) + " |\n";
  }
  return md;
}

nlohmann::ordered_json option_defaults_json() {
  const TrainOptions defaults;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const TrainerOption& t : trainer_options()) {
    const std::string text = t.get(defaults);
    switch (t.kind) {
      case ValueKind::whole: j[t.key] = std::stoll(text); break;
      case ValueKind::real: j[t.key] = std::stod(text); break;
      case ValueKind::switch_: j[t.key] = text == "true"; break;
      default: j[t.key] = text;
    }
  }
  return j;
}

nlohmann::ordered_json contract_json() {
  nlohmann::ordered_json j;
  j["schema"] = kResultSchema;
  j["modes"] = nlohmann::ordered_json::array();
  for (const ModeInfo& m : all_modes()) {
    j["modes"].push_back({{"name", m.name},
                          {"executable", m.executable},
                          {"label", m.label},
                          {"description", m.description},
                          {"data_parallel", m.data_parallel},
                          {"wait_field", wait_field_name(m.wait_field)}});
  }
  j["options"] = nlohmann::ordered_json::array();
  const TrainOptions defaults;
  for (const TrainerOption& t : trainer_options()) {
    nlohmann::ordered_json modes = nlohmann::ordered_json::array();
    for (Mode m : t.modes) modes.push_back(mode_name(m));
    j["options"].push_back({{"key", t.key},
                            {"flag", t.flag},
                            {"help", t.help},
                            {"default", t.get(defaults)},
                            {"modes", modes},
                            {"kind", kind_name(t.kind)},
                            {"config", config_use_name(t.config)}});
  }
  j["option_defaults"] = option_defaults_json();
  j["record_fields"] = nlohmann::ordered_json::array();
  for (const RecordField& f : record_fields()) {
    j["record_fields"].push_back({{"name", f.name}, {"type", f.type}, {"meaning", f.meaning}});
  }
  return j;
}

}  // namespace dpscale
