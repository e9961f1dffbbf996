// gemm_cache.cpp — the --gemm auto cache file (gemm_cache.h).
#include "gemm_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/io/atomic_file.h"

namespace dpscale {

namespace {

constexpr const char* kSchema = "dpscale.gemm-choice/1";

nlohmann::json empty_doc() { return {{"schema", kSchema}, {"entries", nlohmann::json::object()}}; }

}  // namespace

std::string gemm_cache_path() {
  if (const char* p = std::getenv("DPSCALE_GEMM_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/dpscale/gemm-choice.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/dpscale/gemm-choice.json";
  return "";
}

GemmCache::GemmCache(std::string path) : path_(std::move(path)), doc_(empty_doc()) {
  if (path_.empty()) return;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  lock_fd_ = ::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX) != 0) {
    warning_ = "cannot lock " + path_ + ".lock; the choice is measured and not kept";
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    path_.clear();
    return;
  }
  std::ifstream in(path_);
  if (!in) return;  // no cache yet
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("schema", "") == kSchema && j.contains("entries") && j["entries"].is_object()) {
    doc_ = std::move(j);
  } else {
    warning_ = "ignored " + path_ + ": not a GEMM choice cache (" +
               (j.is_discarded() ? std::string("not JSON") : std::string("no schema ") + kSchema + " with entries") +
               "); it is rewritten";
  }
}

GemmCache::~GemmCache() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the descriptor releases the flock
}

std::optional<nlohmann::json> GemmCache::find(const std::string& key) const {
  const nlohmann::json& e = doc_["entries"];
  const auto it = e.find(key);
  if (it == e.end() || !it->is_object()) return std::nullopt;
  return *it;
}

void GemmCache::store(const std::string& key, const nlohmann::json& entry) {
  if (path_.empty()) return;
  doc_["entries"][key] = entry;
  const std::string text = doc_.dump(1) + "\n";
  try {
    write_file_atomically(path_, {text}, "GEMM choice cache");
  } catch (const std::exception& e) {
    warning_ = e.what();
  }
}

}  // namespace dpscale
