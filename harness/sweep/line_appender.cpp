// line_appender.cpp — write-all + fsync per line (see line_appender.h).
#include "harness/sweep/line_appender.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/errors.h"

namespace dpscale {

LineAppender::LineAppender(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError("--out " + path + ": cannot open for appending: " + std::strerror(errno));
}

LineAppender::~LineAppender() { ::close(fd_); }

void LineAppender::append(const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("writing " + path_ + " failed: " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  while (::fsync(fd_) != 0) {
    if (errno != EINTR) throw std::runtime_error("fsync of " + path_ + " failed: " + std::strerror(errno));
  }
}

}  // namespace dpscale
