// config_parser.h — the pieces of parse_config (config.h), one per group of keys, and what they
// share: the source's name in every message, and the JSON-to-flag-text step that lets a trainer
// option's own parser check a config value. Private to harness/sweep/config_*.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/sweep/config.h"

namespace dpscale::config {

using json = nlohmann::ordered_json;  // keeps the config's order of options

// The config's own top-level keys (the axes' keys come from the option table).
extern const std::vector<std::string> kTopKeys;

std::string join(const std::vector<std::string>& v);

// Failures name the source and the key.
struct Parser {
  std::string src;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  // A trainer parser's complaint, joined to the key as the trainer joins it to its flag.
  [[noreturn]] void refuse(const std::string& key, const std::string& complaint) const;
  // j[key], a non-empty array.
  const json& array(const json& j, const char* key) const;
  // The value `v` of `key`, an integer in [lo, hi] ("allowed lo to hi" in the refusal).
  int whole(const std::string& key, const json& v, int lo, int hi) const;
  // The value of `key` checked by trainer option `option_key`'s own parser; returns its text.
  std::string trainer_value(const std::string& key, const json& v, const std::string& option_key) const;
};

// Each fills its part of `c` from `j`, in this order (later parts read earlier ones).
void parse_names(const json& j, const Parser& p, const std::string& source, SweepConfig& c);
void parse_models(const json& j, const Parser& p, SweepConfig& c);
void parse_modes(const json& j, const Parser& p, SweepConfig& c);
void parse_world_sizes(const json& j, const Parser& p, SweepConfig& c);  // and the placement axis
void parse_run_keys(const json& j, const Parser& p, SweepConfig& c);     // link, backend, timeout, ...
void parse_options(const json& j, const Parser& p, SweepConfig& c);      // "options"
void parse_axes(const json& j, const Parser& p, SweepConfig& c);         // the option axes

// Every world size divides the global batch. The other checks of the config as a whole (keys no
// run takes, the option and data rules on every run): config_checks.h.
void check_batch_split(const Parser& p, const SweepConfig& c);

}  // namespace dpscale::config
