// schema_doc.h — the contract's tables rendered for people and programs: the record's fields as
// docs/record.md's Markdown table, and modes, options and record fields as one JSON document
// (`dpscale schema`), which the plotter and other tools read instead of keeping lists of their own.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dpscale {

// "| field | type | meaning |" and one row per record field, in record order.
std::string record_fields_markdown();

// "| option | default | trainers | meaning |" and one row per trainer option, in --help order
// (`dpscale schema --table options`; docs/trainers.md's options table).
std::string trainer_options_markdown();

// {config key: default} of every trainer option, typed as its kind (int, float, switch as a
// bool, the rest strings): {"bucket_cap_mb": 25.0, ...}. The plotter and the reproduction
// report read a default here (in `dpscale schema --format json` or a report JSON) rather than
// keep a copy of it.
nlohmann::ordered_json option_defaults_json();

// {"schema": ..., "modes": [{name, executable, label, data_parallel, wait_field}, ...],
//  "options": [{key, flag, help, default, modes, kind, config}, ...], "option_defaults": {key: value},
//  "record_fields": [{name, type, meaning}, ...]}
nlohmann::ordered_json contract_json();

}  // namespace dpscale
