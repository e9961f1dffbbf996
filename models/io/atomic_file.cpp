// atomic_file.cpp — temporary file + fsync + rename.
#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "models/memory_check.h"

namespace dpscale {

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts,
                           const std::string& what) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw InputError(what + ": cannot write '" + path + "': " + std::strerror(errno));
  }
  auto fail = [&](const char* step) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw InputError(what + ": " + step + " '" + path + "' failed: " + std::strerror(err));
  };
  for (std::string_view part : parts) {
    const char* p = part.data();
    size_t left = part.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("writing");
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (::fsync(fd) != 0) fail("flushing");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw InputError(what + ": closing '" + path + "' failed: " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(what + ": cannot rename into '" + path + "': " + std::strerror(err));
  }
}

std::vector<char> read_whole_file(const std::string& path, const std::string& what) {
  // An ifstream "opens" a directory and reports a nonsense size (bad_alloc, exit 1): refuse
  // anything that is not a regular file up front, as bad input.
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    throw InputError(what + ": '" + path + "' is not a regular file");
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(what + ": cannot open '" + path + "'");
  const std::streamsize size = in.tellg();
  if (size < 0) throw InputError(what + ": cannot read '" + path + "'");
  // The whole file is held in memory (and the data copied once more): refuse one larger than
  // the machine before asking for it.
  check_fits(what + " '" + path + "'", static_cast<uint64_t>(size), 1, physical_memory_bytes(), "memory");
  std::vector<char> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(bytes.data(), size)) {
    throw InputError(what + ": cannot read '" + path + "'");
  }
  return bytes;
}

}  // namespace dpscale
