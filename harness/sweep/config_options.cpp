// config_options.cpp — the trainer values of a sweep config: the base options ("options"), the
// option axes (a list, or one value, under an option's axis key), and the batch every world size
// must divide. Every value is checked by the trainer option's own parser, so the words of a
// refusal are the trainers'.
#include <algorithm>

#include "harness/sweep/config_parser.h"

namespace dpscale::config {

namespace {

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

}  // namespace

std::string Parser::trainer_value(const std::string& key, const json& v, const std::string& option_key) const {
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

void parse_options(const json& j, const Parser& p, SweepConfig& c) {
  if (!j.contains("options")) return;
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

void parse_axes(const json& j, const Parser& p, SweepConfig& c) {
  // An option is swept or set in "options", not both.
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
      text = t.get(scratch);  // as the point renders it: 4 and 4.0, ring and ring, alike
      if (std::find(axis.values.begin(), axis.values.end(), text) != axis.values.end()) {
        p.fail(key, "repeats " + t.key + " " + text);
      }
      axis.values.push_back(text);
    }
    c.axes.push_back(std::move(axis));
  }
}

void check_batch_split(const Parser& p, const SweepConfig& c) {
  // Every rank takes an equal shard of the global batch: a world size that does not divide it is
  // refused here, in the trainer's words, instead of failing every run of that size.
  const bool any_dp = std::any_of(c.modes.begin(), c.modes.end(), [](ModeRef m) { return m->data_parallel; });
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
}

}  // namespace dpscale::config
