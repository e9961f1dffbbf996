// trainer_args.cpp — the arguments a run's trainer gets from its config (config.h).
#include "harness/sweep/config.h"

namespace dpscale {

std::vector<std::string> trainer_args(const SweepConfig& c, const std::string& model, ModeRef mode_ref,
                                      const Settings& axes) {
  const Mode mode = mode_ref.id();
  std::vector<std::string> a = {option("model").flag, model};
  for (const TrainerArg& o : c.options) {
    if (!o.option->accepted_by(mode)) continue;
    a.push_back(o.option->flag);
    if (!o.value.empty()) a.push_back(o.value);
  }
  a.insert(a.end(), {option("backend").flag, c.backend, option("quiet").flag});
  if (option("link").accepted_by(mode) && c.link != "none") {
    a.insert(a.end(), {option("link").flag, c.link, option("link_dilation").flag, c.link_dilation});
  }
  for (const auto& [key, value] : axes) {
    const TrainerOption& t = option(key);
    if (t.kind != ValueKind::switch_) {
      a.insert(a.end(), {t.flag, value});
    } else if (value == "true") {
      a.push_back(t.flag);
    }
  }
  return a;
}

}  // namespace dpscale
