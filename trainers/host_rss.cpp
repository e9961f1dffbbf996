// host_rss.cpp — VmHWM and its reset (host_rss.h).
#include "host_rss.h"

#include <fstream>
#include <sstream>
#include <string>

namespace dpscale {

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

int64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream in(line.substr(6));
    int64_t kb = 0;
    in >> kb;  // "  123456 kB"
    return kb * 1024;
  }
  return 0;
}

}  // namespace dpscale
