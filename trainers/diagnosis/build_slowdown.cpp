// build_slowdown.cpp — the compiled-in experimental slowdown of build_slowdown.h.
#include "trainers/diagnosis/build_slowdown.h"

#include "contract/option_values.h"
#include "core/errors.h"

#include <exception>

#ifndef DPSCALE_BUILD_SLOWDOWN
#define DPSCALE_BUILD_SLOWDOWN ""
#endif

namespace dpscale {

BuildSlowdown parse_build_slowdown(const std::string& text) {
  BuildSlowdown b;
  if (text.empty()) return b;
  const size_t colon = text.find(':');
  const std::string scope = text.substr(0, colon);
  if (colon == std::string::npos || (scope != "dp" && scope != "all")) {
    throw InputError("DPSCALE_BUILD_SLOWDOWN '" + text + "': expected dp:PCT or all:PCT");
  }
  b.data_parallel_only = scope == "dp";
  try {
    b.pct = parse_real(text.substr(colon + 1), {0.0, false}, {100.0});
  } catch (const std::exception& e) {
    throw InputError("DPSCALE_BUILD_SLOWDOWN '" + text + "': " + e.what());
  }
  return b;
}

BuildSlowdown build_slowdown() { return parse_build_slowdown(DPSCALE_BUILD_SLOWDOWN); }

}  // namespace dpscale
