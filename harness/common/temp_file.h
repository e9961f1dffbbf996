// temp_file.h — a file under the system temp dir holding a text, removed when the object dies:
// how the harness hands a document to a Python script (the plotter, the regression gate).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dpscale {

class TempFile {
 public:
  TempFile(const std::string& text, const std::string& suffix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("dpscale-XXXXXX" + suffix)).string();
    const int fd = ::mkstemps(tmpl.data(), static_cast<int>(suffix.size()));
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + tmpl);
    ::close(fd);
    path_ = tmpl;
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path_);
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace dpscale
