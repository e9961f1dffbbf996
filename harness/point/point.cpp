// point.cpp — a point's settings from a run's flags, its key and its names.
#include "harness/point/point.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <tuple>

#include "contract/modes.h"
#include "contract/option_values.h"
#include "contract/trainer_options.h"
#include "models/mlp_spec.h"

namespace dpscale {

namespace {

// The model is the point's own field; every other measured option is a setting.
bool in_settings(const TrainerOption& t) { return t.measured && t.key != "model"; }

Settings render(const TrainOptions& o) {
  Settings s;
  for (const TrainerOption& t : trainer_options()) {
    if (in_settings(t)) s.emplace_back(t.key, t.get(o));
  }
  return s;
}

const TrainerOption* by_flag(const std::string& flag) {
  for (const TrainerOption& t : trainer_options()) {
    if (t.flag == flag) return &t;
  }
  return nullptr;
}

// Options the mode does not take back to their defaults: a trainer never runs with them, so
// two runs that differ only there are one point.
void only_taken(Settings& s, ModeRef mode) {
  const Settings defaults = default_settings();
  for (size_t i = 0; i < s.size(); ++i) {
    if (!option(s[i].first).accepted_by(mode.id())) s[i].second = defaults[i].second;
  }
}

// Settings in order, numbers compared as numbers ("4" before "25"); the values are each option's
// own rendering, so equal numbers are equal strings.
bool settings_less(const Settings& a, const Settings& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (a[i].first != b[i].first) return a[i].first < b[i].first;
    const ValueKind kind = option(a[i].first).kind;
    if (kind == ValueKind::whole || kind == ValueKind::real) {
      char *end_a = nullptr, *end_b = nullptr;
      const double x = std::strtod(a[i].second.c_str(), &end_a), y = std::strtod(b[i].second.c_str(), &end_b);
      if (*end_a == '\0' && *end_b == '\0' && x != y) return x < y;
    }
    return a[i].second < b[i].second;
  }
  return a.size() < b.size();
}

// The options a point's names spell in words of their own, before the placement: the bucket cap
// ("cap 4 MB", "-cap4") where the mode takes one, the link ("pcie4", "-pcie4") where there is one.
bool worded(const std::string& key) { return key == "bucket_cap_mb" || key == "link"; }

}  // namespace

Settings default_settings() { return render(TrainOptions{}); }

Settings settings_of_args(const std::vector<std::string>& args) {
  TrainOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const TrainerOption* t = by_flag(args[i]);
    if (!t) continue;
    std::string value = "true";
    if (t->kind != ValueKind::switch_) {
      if (i + 1 >= args.size()) break;
      value = args[++i];
    }
    try {
      t->set(o, value);
    } catch (const std::exception&) {
      // A value the trainer refused: that run failed and its line says why; its key keeps the
      // option's default rather than a value no run had.
    }
  }
  return render(o);
}

Settings settings_of_argv(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string name = std::filesystem::path(argv[i]).filename().string();
    for (const ModeInfo& m : all_modes()) {
      if (name == m.executable) return settings_of_args({argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end()});
    }
  }
  return default_settings();
}

Point Point::of_args(std::string model, ModeRef mode, int world_size, const std::vector<std::string>& args,
                     int nodes, int ranks_per_node) {
  Point p{std::move(model), mode, world_size, nodes, ranks_per_node, settings_of_args(args)};
  only_taken(p.settings, p.mode);
  return p;
}

Point Point::of_record(const RunRecord& r) {
  // The record's own fields named as the options are, rendered as flags: the record is read
  // through the option table as a sweep line's argv is. Two fields of an option's name hold what
  // the trainer resolved, not what it was asked (auto's backend, auto:TFLOPS's dilation F, which
  // differs run by run): a point keyed on them would split the repeats of one measurement.
  static const std::set<std::string> resolved = {"backend", "link_dilation"};
  const nlohmann::ordered_json j = dpscale::to_json(r);
  std::vector<std::string> args;
  for (const TrainerOption& t : trainer_options()) {
    if (!in_settings(t) || resolved.count(t.key) || !j.contains(t.key) || j.at(t.key).is_null()) continue;
    const auto& v = j.at(t.key);
    if (t.kind == ValueKind::switch_) {
      if (v.is_boolean() && v.get<bool>()) args.push_back(t.flag);
    } else if (v.is_string()) {
      args.insert(args.end(), {t.flag, v.get<std::string>()});
    } else if (v.is_number()) {
      args.insert(args.end(), {t.flag, format_number(v.get<double>())});
    }
  }
  return of_args(model_key(r.model, r.widths), ModeRef::named(r.mode), r.world_size, args);
}

bool Point::operator<(const Point& o) const {
  // Modes by name, as the points of a report have always been ordered.
  const auto head = [](const Point& p) {
    return std::make_tuple(std::string_view(p.model), std::string_view(p.mode.name()), p.world_size, p.nodes,
                           p.ranks_per_node);
  };
  if (head(*this) != head(o)) return head(*this) < head(o);
  return settings_less(settings, o.settings);
}

const std::string& Point::setting(std::string_view key) const {
  static const std::string none;
  for (const auto& [k, v] : settings) {
    if (k == key) return v;
  }
  return none;
}

bool Point::takes(std::string_view key) const {
  const TrainerOption* t = find_option(key);
  return t && t->accepted_by(mode.id());
}

std::optional<double> Point::bucket_cap_mb() const {
  if (!takes("bucket_cap_mb")) return std::nullopt;
  return std::stod(setting("bucket_cap_mb"));
}

const std::string& Point::link() const { return setting("link"); }

std::string Point::placement() const {
  return nodes > 0 ? std::to_string(nodes) + "x" + std::to_string(ranks_per_node) : "";
}

Point Point::beside(ModeRef m, int k) const {
  Point p = *this;
  p.mode = m;
  p.world_size = k;
  if (k == 1) p.nodes = p.ranks_per_node = 0;  // a single run has no placement
  only_taken(p.settings, p.mode);
  return p;
}

Point Point::with_default(std::string_view key) const {
  Point p = *this;
  const Settings defaults = default_settings();
  for (size_t i = 0; i < p.settings.size(); ++i) {
    if (p.settings[i].first == key) p.settings[i].second = defaults[i].second;
  }
  return p;
}

std::string Point::curve() const { return model + " " + mode.name() + (link() != "none" ? " " + link() : ""); }

std::vector<Point> Point::block() const {
  if (!mode->data_parallel) return {*this};
  return {beside(Mode::single, 1), *this};
}

std::string Point::history_key() const {
  nlohmann::json p;  // keys sorted: one point, one string
  p["model"] = model;
  p["mode"] = mode.name();
  p["world_size"] = world_size;
  if (const auto cap = bucket_cap_mb()) {
    p["bucket_cap_mb"] = *cap;
  } else {
    p["bucket_cap_mb"] = nullptr;
  }
  p["link"] = link();
  if (nodes > 0) p["placement"] = placement();
  nlohmann::json s = nlohmann::json::object();
  const Settings defaults = default_settings();
  for (size_t i = 0; i < settings.size(); ++i) {
    const auto& [key, value] = settings[i];
    if (!worded(key) && value != defaults[i].second) s[key] = value;
  }
  p["settings"] = s;
  return p.dump();
}

std::string Point::describe() const {
  std::string d = model + " " + mode.name() + " K=" + std::to_string(world_size);
  const auto word = [&d](const std::string& w) { d.append(" ").append(w); };
  if (const auto cap = bucket_cap_mb()) word("cap " + format_number(*cap) + " MB");
  if (link() != "none") word(link());
  if (nodes > 0) word(placement());
  const Settings defaults = default_settings();
  for (size_t i = 0; i < settings.size(); ++i) {
    const auto& [key, value] = settings[i];
    if (worded(key) || option(key).axis.empty() || value == defaults[i].second) continue;
    word(key + "=" + value);
  }
  return d;
}

std::string Point::run_id(const std::string& config, int repeat, const std::vector<std::string>& swept) const {
  std::string id = config + "/" + model + "-" + mode.name() + "-k" + std::to_string(world_size);
  if (const auto cap = bucket_cap_mb()) id += "-cap" + format_number(*cap);
  if (link() != "none") id += "-" + link();
  if (nodes > 0) id += "-p" + placement();
  for (const std::string& key : swept) {
    if (!worded(key) && takes(key)) id += "-" + key + "=" + setting(key);
  }
  return id + "-r" + std::to_string(repeat);
}

std::vector<std::string> Point::flags() const {
  const Settings defaults = default_settings();
  std::vector<std::string> out;
  for (size_t i = 0; i < settings.size(); ++i) {
    const auto& [key, value] = settings[i];
    if (value == defaults[i].second) continue;
    const TrainerOption& t = option(key);
    if (t.kind == ValueKind::switch_) {
      out.push_back(t.flag);  // on: a switch away from its default (off)
    } else {
      out.insert(out.end(), {t.flag, value});
    }
  }
  return out;
}

std::vector<std::string> varying_settings(const std::vector<Point>& points) {
  std::vector<std::string> out;
  for (const auto& [key, _] : default_settings()) {
    std::set<std::string> values;
    for (const Point& p : points) {
      if (p.takes(key)) values.insert(p.setting(key));
    }
    if (values.size() > 1) out.push_back(key);
  }
  return out;
}

std::string setting_text(const Point& p, std::string_view key) { return p.takes(key) ? p.setting(key) : "—"; }

}  // namespace dpscale
