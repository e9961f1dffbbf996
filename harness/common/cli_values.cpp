// cli_values.cpp — the option checks of cli_values.h, on the contract's parsers.
#include "harness/common/cli_values.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "contract/option_paths.h"
#include "core/errors.h"

namespace dpscale {

namespace {

// The option's check: `check` throws ValueError (a complaint) or OptionError (which names an
// option itself: only its complaint is kept, CLI11 puts the option's name first). The validator's
// description stays empty, so the type name alone names the kind.
CLI::Option* checked(CLI::Option* o, const std::string& kind, std::function<void(const std::string&)> check) {
  o->type_name(kind);
  o->check(CLI::Validator(
      [check = std::move(check)](std::string& text) -> std::string {
        try {
          check(text);
        } catch (const OptionError& e) {
          return e.complaint();
        } catch (const InputError& e) {  // a file's own complaint, which names the file
          return e.what();
        } catch (const ValueError& e) {
          return e.what();
        }
        return "";
      },
      ""));
  return o;
}

std::string range_text(Bound lo, Bound hi) {
  return std::string(lo.inclusive ? "[" : "(") + format_number(lo.value) + ", " +
         (hi.value == kNoLimit ? std::string("inf)") : format_number(hi.value) + (hi.inclusive ? "]" : ")"));
}

std::string braced(const std::vector<std::string>& items) {
  std::string s = "{";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + items[i];
  return s + "}";
}

bool executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

CLI::Option* whole_in(CLI::Option* o, int64_t lo, int64_t hi) {
  const std::string allowed = "; allowed " + std::to_string(lo) + " to " + std::to_string(hi);
  return checked(o, "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", [=](const std::string& v) {
    try {
      parse_whole(v, lo, hi);
    } catch (const ValueError& e) {
      throw ValueError(e.what() + allowed);
    }
  });
}

CLI::Option* real_in(CLI::Option* o, Bound lo, Bound hi) {
  const std::string range = range_text(lo, hi);
  return checked(o, "NUMBER in " + range, [=](const std::string& v) {
    try {
      parse_real(v, lo, hi);
    } catch (const ValueError& e) {
      throw ValueError(e.what() + std::string("; allowed in ") + range);
    }
  });
}

CLI::Option* one_of(CLI::Option* o, const std::vector<std::string>& choices) {
  return checked(o, braced(choices), [choices](const std::string& v) { parse_choice(v, choices, "value"); });
}

CLI::Option* some_of(CLI::Option* o, const std::vector<std::string>& choices) {
  return checked(o, braced(choices) + ",...", [choices](const std::string& v) {
    std::istringstream in(v);
    std::vector<std::string> seen;
    for (std::string item; std::getline(in, item, ',');) {
      parse_choice(item, choices, "value");
      for (const std::string& s : seen) {
        if (s == item) throw ValueError("names '" + item + "' twice");
      }
      seen.push_back(item);
    }
    if (seen.empty()) throw ValueError("names none of " + or_list(choices));
  });
}

CLI::Option* input_file(CLI::Option* o) { return checked(o, "FILE", check_readable_file); }
CLI::Option* input_dir(CLI::Option* o) { return checked(o, "DIR", check_readable_dir); }
CLI::Option* output_file(CLI::Option* o) { return checked(o, "OUT FILE", check_writable_file_making_dirs); }
CLI::Option* output_dir(CLI::Option* o) { return o->type_name("OUT DIR"); }
CLI::Option* kind_only(CLI::Option* o, const std::string& kind) { return o->type_name(kind); }

CLI::Option* program(CLI::Option* o) {
  return checked(o, "PROGRAM", [](const std::string& v) {
    parse_nonempty(v);
    if (v.find('/') != std::string::npos) {
      if (!executable_file(v)) throw ValueError("'" + v + "' is not an executable file");
      return;
    }
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');) {
      if (executable_file(std::filesystem::path(d.empty() ? "." : d) / v)) return;
    }
    throw ValueError("no program '" + v + "' on PATH");
  });
}

CLI::Option* launcher_args(CLI::Option* o, const std::vector<std::string>& reserved) {
  std::string names;
  for (const std::string& r : reserved) names += (names.empty() ? "" : ", ") + r;
  return checked(o, "ARGS but not " + names, [reserved](const std::string& v) {
    std::istringstream in(v);
    for (std::string word; in >> word;) {
      for (const std::string& r : reserved) {
        if (word == r || word.rfind(r + "=", 0) == 0) {
          throw ValueError("sets " + r + ", which the sweep sets for every run itself; leave it out");
        }
      }
    }
  });
}

CLI::Option* text_of(CLI::Option* o, const std::string& kind, std::function<void(const std::string&)> check) {
  return checked(o, kind, std::move(check));
}

}  // namespace dpscale
