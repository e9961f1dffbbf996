// gemm_cache.h — the file that keeps --gemm auto's choices, so each is measured once per machine.
//
// Where: $DPSCALE_GEMM_CACHE (a file path) when set, else $XDG_CACHE_HOME/dpscale/gemm-choice.json,
// else ~/.cache/dpscale/gemm-choice.json (the XDG default); with none of these, no cache (every
// run measures). One JSON object, {"schema": "dpscale.gemm-choice/1", "entries": {KEY: entry}};
// gemm_choice.cpp writes the entries and says what the key holds (the machine's fingerprint, the
// libraries and their kernels, threads, the GEMM shapes).
//
// The file is read and written under an exclusive lock on PATH.lock (flock), held from the read
// to the write: the ranks of one job on one machine start together, the first measures and
// stores, the others wait and read its choice — one measurement, not K measurements competing for
// the same cores. A file that cannot be read as a cache (truncated, edited, another program's) is
// ignored with a warning and rewritten; a directory that cannot be written means no cache.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace dpscale {

// The cache file's path as above, "" when there is none.
std::string gemm_cache_path();

class GemmCache {
 public:
  // Locks and reads `path` ("" : a cache that holds nothing and stores nothing).
  explicit GemmCache(std::string path);
  ~GemmCache();
  GemmCache(const GemmCache&) = delete;
  GemmCache& operator=(const GemmCache&) = delete;

  std::optional<nlohmann::json> find(const std::string& key) const;
  // Adds or replaces the entry and writes the file atomically (write, fsync, rename). A failed
  // write is a warning, not an error: the choice is still made, only not kept.
  void store(const std::string& key, const nlohmann::json& entry);
  // What went wrong reading or writing the file ("" if nothing): for the caller to print.
  const std::string& warning() const { return warning_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int lock_fd_ = -1;
  nlohmann::json doc_;
  std::string warning_;
};

}  // namespace dpscale
