// option_paths.cpp — the path checks of option_paths.h, each a few syscalls that leave nothing.
#include "option_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "option_values.h"

namespace dpscale {

namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

[[noreturn]] void refuse(const std::string& what, const std::string& path, int err) {
  throw ValueError("cannot " + what + " " + quoted(path) + ": " + std::strerror(err));
}

// The directory a file path lives in ("." for a bare name).
std::string dir_of(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Whether a new entry can be made in the existing directory `dir`: make a uniquely named probe
// there (a file, or a directory when `as_dir`) and remove it again. Unique, because every rank
// of a job checks the same --save at the same moment.
void probe_create(const std::string& dir, const std::string& target, bool as_dir) {
  std::string probe = (fs::path(dir) / ".dpscale-probe-XXXXXX").string();
  if (as_dir) {
    if (::mkdtemp(probe.data()) == nullptr) refuse("create directory", target, errno);
    ::rmdir(probe.c_str());
    return;
  }
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) refuse("create", target, errno);
  ::close(fd);
  ::unlink(probe.c_str());
}

// The nearest ancestor of `path` that exists (path itself when it does).
std::string nearest_existing(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) return fs::path(path).is_absolute() ? "/" : ".";
  return p.string();
}

// `dir` and its missing parents could be made: the nearest existing ancestor is a directory
// that takes a new directory.
void check_makeable_dir(const std::string& dir, const std::string& target) {
  const std::string base = nearest_existing(dir);
  struct stat st {};
  if (::stat(base.c_str(), &st) != 0) refuse("create directory", dir, errno);
  if (!S_ISDIR(st.st_mode)) {
    throw ValueError("cannot create directory " + quoted(dir) + ": " + quoted(base) + " is not a directory");
  }
  probe_create(base, target, true);
}

}  // namespace

void check_readable_file(const std::string& path) {
  parse_nonempty(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) refuse("open", path, errno);
  if (S_ISDIR(st.st_mode)) throw ValueError(quoted(path) + " is a directory, not a file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) return;  // a device: opening it may do something
  // Non-blocking: a FIFO with no writer yet (a shell's <(...)) must not hang the check.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) refuse("open", path, errno);
  ::close(fd);
}

void check_readable_dir(const std::string& path) {
  parse_nonempty(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw ValueError("directory " + quoted(path) + " does not exist");
    refuse("read", path, errno);
  }
  if (!S_ISDIR(st.st_mode)) throw ValueError(quoted(path) + " is not a directory");
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) refuse("read directory", path, errno);
  ::closedir(d);
}

void check_writable_file(const std::string& path) {
  parse_nonempty(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw ValueError(quoted(path) + " is a directory");
    if (!S_ISREG(st.st_mode)) return;  // /dev/null and the like: written as they are
    // Opened for writing, neither truncated nor written: the file is what it was.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) refuse("write", path, errno);
    ::close(fd);
    return;
  }
  const std::string dir = dir_of(path);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw ValueError("directory " + quoted(dir) + " does not exist");
  }
  probe_create(dir, path, false);
}

void check_writable_file_making_dirs(const std::string& path) {
  parse_nonempty(path);
  const std::string dir = dir_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    check_writable_file(path);
    return;
  }
  check_makeable_dir(dir, dir);
}

void check_writable_dir(const std::string& path) {
  parse_nonempty(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw ValueError(quoted(path) + " is a file, not a directory");
    probe_create(path, path, false);
    return;
  }
  check_makeable_dir(path, path);
}

}  // namespace dpscale
