// plot.cpp — run the plotter script with the file and the output directory.
#include "plot.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "harness/subprocess.h"
#include "models/errors.h"

#ifndef DPSCALE_SOURCE_DIR
#define DPSCALE_SOURCE_DIR "."
#endif

namespace dpscale {

int run_plot(const PlotOptions& o) {
  if (::access(o.results.c_str(), R_OK) != 0 || std::filesystem::is_directory(o.results)) {
    throw InputError(o.results + ": cannot read the results file");
  }
  std::string script = o.script;
  if (script.empty()) {
    const char* env = std::getenv("DPSCALE_PLOT_SCRIPT");
    script = env && *env ? env : std::string(DPSCALE_SOURCE_DIR) + "/plots/plot_results.py";
  }
  if (::access(script.c_str(), R_OK) != 0) throw InputError("plotter " + script + " not found (--script)");
  std::filesystem::create_directories(o.out_dir);

  ProcessOptions po;
  po.echo_stderr = true;  // its messages are for the user, as they come
  const ProcessResult r = run_process({o.python, script, o.results, "--out", o.out_dir}, po);
  std::cout << r.out << std::flush;
  if (r.spawn_failed) throw InputError("cannot run " + o.python + " (--python)");
  if (r.exit_code == 0 || r.exit_code == 2) return r.exit_code;
  std::cerr << "dpscale plot: " << script << " failed (exit " << r.exit_code << ", signal " << r.term_signal << ")\n";
  return 1;
}

}  // namespace dpscale
