// script_path.h — where the Python side of a subcommand is: in an installed tree beside the
// command (<prefix>/share/dpscale/, from `cmake --install`), else in the source tree it was built
// from. An installed tree so keeps working when copied elsewhere and the source tree is gone.
#pragma once

#include <string>

namespace dpscale {

// `rel` is the script's path in the source tree ("plots/plot_results.py"): <dir of the running
// executable>/../share/dpscale/<rel> where that file is there, else <source tree>/<rel>.
std::string script_path(const std::string& rel);

}  // namespace dpscale
