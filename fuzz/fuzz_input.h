// fuzz_input.h — what every fuzz target shares: the rule for a parser's answer, and a scratch
// file for the parsers that read paths (.npy, IDX, safetensors).
//
// The rule: a parser either accepts the input or refuses it with InputError (exit 2, one line,
// in the real programs). Any other exception escapes LLVMFuzzerTestOneInput and ends the run
// (std::terminate: libFuzzer saves the input as a crash); so do ASan/UBSan reports, hangs
// (-timeout) and huge allocations (-rss_limit_mb / -malloc_limit_mb).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace dpscale::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A file of this process under /dev/shm (memory, so writing it per input costs microseconds),
// removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name)
      : path_((::access("/dev/shm", W_OK) == 0 ? std::string("/dev/shm/") : std::string("/tmp/")) + "dpscale-fuzz-" +
              std::to_string(::getpid()) + "-" + name) {}
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& write(const std::string& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A property that must hold for an accepted input; a break is a bug, reported as a crash.
inline void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace dpscale::fuzz
