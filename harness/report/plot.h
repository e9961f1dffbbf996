// plot.h — `dpscale plot FILE.jsonl --out DIR [--format png,svg]`: reads the results file, computes
// the report (analysis.h) and hands its JSON (`dpscale report --format json`) to the plotter,
// `/usr/bin/python3 <source>/plots/plot_results.py REPORT.json --out DIR`. Every number the
// charts draw comes from that JSON, so a chart and the report can never disagree.
//
// Debian's python3 is the one with matplotlib (python3-matplotlib); a pyenv `python3` earlier
// on PATH usually lacks it, hence the absolute path. The script's contract: exit 0 after writing
// each chart as PNG and SVG into DIR, exit 2 with one line on bad input. The report JSON lives
// in a temporary file for the script's lifetime only.
#pragma once

#include <string>

namespace dpscale {

struct PlotOptions {
  std::string results;
  std::string out_dir = "plots/out";
  std::string formats;  // "" = the plotter's default (png,svg); else passed on as --format
  std::string python = "/usr/bin/python3";
  std::string script;  // "" = $DPSCALE_PLOT_SCRIPT, else <source>/plots/plot_results.py
};

// Returns the exit status: the script's 0 or 2, or 1 for any other failure of it.
// Throws InputError when the results file is unreadable, not a results file or holds no
// successful run, or when the script cannot be read.
int run_plot(const PlotOptions& o);

}  // namespace dpscale
