// line_appender.h — appends whole lines to a results file, each on disk before the next run.
//
// One write(2) per line on an O_APPEND descriptor, then fsync(2): a crash, a kill or a power cut
// can cut at most the line being written, never one before it, and a line the progress output
// called finished is on disk. The descriptor is close-on-exec, so no trainer inherits it.
#pragma once

#include <string>

namespace dpscale {

class LineAppender {
 public:
  // Opens (creating) `path` for appending. Throws InputError if it cannot.
  explicit LineAppender(const std::string& path);
  ~LineAppender();
  LineAppender(const LineAppender&) = delete;
  LineAppender& operator=(const LineAppender&) = delete;

  // Writes `line` and a newline, then fsyncs. Throws std::runtime_error on a failed write.
  void append(const std::string& line);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace dpscale
