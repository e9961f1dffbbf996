// script_path.cpp — the installed tree first, the source tree after (script_path.h).
#include "harness/common/script_path.h"

#include <filesystem>

#ifndef DPSCALE_SOURCE_DIR
#define DPSCALE_SOURCE_DIR "."
#endif

namespace dpscale {

std::string script_path(const std::string& rel) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "dpscale" / rel;
    if (fs::is_regular_file(installed, ec)) return installed.string();
  }
  return (fs::path(DPSCALE_SOURCE_DIR) / rel).string();
}

}  // namespace dpscale
