// point_settings.cpp — the measured options of a run, from its flags.
#include "harness/sweep/point_settings.h"

#include <filesystem>

#include "core/errors.h"

namespace dpscale {

namespace {

// The point's own fields: SweepPoint::model, link, bucket_cap_mb.
bool own_field(const std::string& key) { return key == "model" || key == "link" || key == "bucket_cap_mb"; }

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

}  // namespace

bool in_settings(const TrainerOption& t) { return t.measured && !own_field(t.key); }

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

Settings settings_for_mode(const Settings& s, Mode mode) {
  const Settings defaults = default_settings();
  Settings out = s;
  for (auto& [key, value] : out) {
    if (!option(key).accepted_by(mode)) value = setting(defaults, key);
  }
  return out;
}

std::string setting(const Settings& s, const std::string& key) {
  for (const auto& [k, v] : s) {
    if (k == key) return v;
  }
  return "";
}

std::string describe_axes(const Settings& s) {
  const Settings defaults = default_settings();
  std::string out;
  for (const auto& [key, value] : s) {
    if (!option(key).axis.empty() && value != setting(defaults, key)) out += (out.empty() ? "" : " ") + key + "=" + value;
  }
  return out;
}

}  // namespace dpscale
