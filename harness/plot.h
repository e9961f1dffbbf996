// plot.h — `dpscale plot FILE.jsonl --out DIR`: hands the file to the plotter,
// `/usr/bin/python3 <source>/plots/plot_results.py FILE --out DIR`.
//
// Debian's python3 is the one with matplotlib (python3-matplotlib); a pyenv `python3` earlier
// on PATH usually lacks it, hence the absolute path. The script's contract: exit 0 after writing
// each chart as PNG and SVG into DIR, exit 2 with one line on bad input.
#pragma once

#include <string>

namespace dpscale {

struct PlotOptions {
  std::string results;
  std::string out_dir = "plots/out";
  std::string python = "/usr/bin/python3";
  std::string script;  // "" = $DPSCALE_PLOT_SCRIPT, else <source>/plots/plot_results.py
};

// Returns the exit status: the script's 0 or 2, or 1 for any other failure of it.
// Throws InputError when the results file or the script cannot be read.
int run_plot(const PlotOptions& o);

}  // namespace dpscale
