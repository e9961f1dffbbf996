// cli_values.h — the kinds of value dpscale's options take, each with its check. A helper gives
// an option its check (run by CLI11 as the command line is parsed: before anything is read,
// made or run) and its kind's name, which --help prints after the flag:
//
//   INT in [1, 1000]   NUMBER in (0, 0.5]   {md,json}   FILE   DIR   OUT FILE   PROGRAM   ARGS ...
//
// A refusal is one line naming the option, in the contract's words ("--repeats: must be at least
// 1 (got 0); allowed 1 to 1000"). tests/harness/test_bad_input.cpp reads each option's kind from
// its type name to give it a value it must refuse, so every option of every subcommand is tried.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/option_values.h"

namespace dpscale {

// A whole number in [lo, hi]: "INT in [lo, hi]".
CLI::Option* whole_in(CLI::Option* o, int64_t lo, int64_t hi);
// A finite real number in the range: "NUMBER in (0, 0.5]".
CLI::Option* real_in(CLI::Option* o, Bound lo, Bound hi);
// One of `choices`: "{md,csv,json}".
CLI::Option* one_of(CLI::Option* o, const std::vector<std::string>& choices);
// A comma-separated list of `choices`, each at most once: "{png,svg,pdf},...".
CLI::Option* some_of(CLI::Option* o, const std::vector<std::string>& choices);
// A file to read (FILE), a directory to read (DIR), a file to write whose missing directories
// may be made (OUT FILE).
CLI::Option* input_file(CLI::Option* o);
CLI::Option* input_dir(CLI::Option* o);
CLI::Option* output_file(CLI::Option* o);
// A directory to write into, made if missing, checked by the subcommand itself when it starts: "OUT DIR".
CLI::Option* output_dir(CLI::Option* o);
// A program: a path to an executable, or a name found on PATH: "PROGRAM".
CLI::Option* program(CLI::Option* o);
// Extra arguments for a launcher, split on spaces, that must not set what dpscale sets itself
// (`reserved`, e.g. -np): "ARGS but not -np, ...".
CLI::Option* launcher_args(CLI::Option* o, const std::vector<std::string>& reserved);
// An option whose value the subcommand checks itself when it starts, before it reads or makes
// anything (its words are its own): only its kind is named, e.g. "{md,csv,json}".
CLI::Option* kind_only(CLI::Option* o, const std::string& kind);
// Any other form, named `kind` ("LINK", "MODEL=SECONDS,..."), checked by `check`, which throws
// ValueError or OptionError with its complaint.
CLI::Option* text_of(CLI::Option* o, const std::string& kind, std::function<void(const std::string&)> check);

}  // namespace dpscale
