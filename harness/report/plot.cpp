// plot.cpp — results file → report JSON in a temporary file → the plotter script.
#include "harness/report/plot.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "harness/report/analysis.h"
#include "harness/report/report.h"
#include "harness/results/results_file.h"
#include "harness/common/script_path.h"
#include "harness/common/subprocess.h"
#include "harness/common/temp_file.h"
#include "core/errors.h"

namespace dpscale {

namespace {

void check_readable(const std::string& path) {
  std::error_code ec;
  const std::string cannot = path + ": cannot read the results file";
  if (!std::filesystem::exists(path, ec)) throw InputError(cannot + " (no such file)");
  if (std::filesystem::is_directory(path, ec)) throw InputError(cannot + " (it is a directory)");
  if (::access(path.c_str(), R_OK) != 0) throw InputError(cannot);
}

// The report of the file, as `dpscale report --format json` prints it. The file's warnings
// (truncated lines) travel inside it: the plotter prints them, so they are not printed twice.
std::string report_json(const std::string& path) {
  const ResultsFile f = read_results(path);
  refuse_gpu_shared(f, "dpscale plot");
  if (f.entries.empty()) throw InputError(path + ": no runs in the file");
  const Analysis a = analyse(f);
  if (a.points.empty()) {
    throw InputError(path + ": no successful runs to plot (" + std::to_string(a.failed.size()) + " failed)");
  }
  return render_report(a, path, "json");
}

}  // namespace

int run_plot(const PlotOptions& o) {
  check_readable(o.results);
  std::string script = o.script;
  if (script.empty()) {
    const char* env = std::getenv("DPSCALE_PLOT_SCRIPT");
    script = env && *env ? env : script_path("plots/plot_results.py");
  }
  if (::access(script.c_str(), R_OK) != 0) throw InputError("plotter " + script + " not found (--script)");
  // --out must be a directory we can make: one line, not a filesystem exception.
  std::error_code ec;
  if (std::filesystem::exists(o.out_dir, ec) && !std::filesystem::is_directory(o.out_dir, ec)) {
    throw InputError("plot --out '" + o.out_dir + "' is a file, not a directory");
  }
  const TempFile report(report_json(o.results), ".json");
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw InputError("plot --out: cannot create directory '" + o.out_dir + "': " + ec.message());

  std::vector<std::string> argv = {o.python, script, report.path(), "--out", o.out_dir};
  if (!o.formats.empty()) argv.insert(argv.end(), {"--format", o.formats});
  ProcessOptions po;
  po.echo_stderr = true;  // its messages are for the user, as they come
  const ProcessResult r = run_process(argv, po);
  std::cout << r.out << std::flush;
  if (r.spawn_failed) throw InputError("cannot run " + o.python + " (--python)");
  if (r.exit_code == 0 || r.exit_code == 2) return r.exit_code;
  std::cerr << "dpscale plot: " << script << " failed (exit " << r.exit_code << ", signal " << r.term_signal << ")\n";
  return 1;
}

}  // namespace dpscale
