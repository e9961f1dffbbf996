// system_info.cpp — host, CPU, GPU and library versions.
#include "harness/sweep/system_info.h"

#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "harness/common/subprocess.h"

namespace dpscale {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

ProcessResult quick(const std::vector<std::string>& argv) {
  ProcessOptions o;
  o.timeout_s = 20;  // a wedged driver must not stall the sweep
  return run_process(argv, o);
}

}  // namespace

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return trim(line.substr(line.find(':') + 1));
  }
  return "";
}

std::vector<std::string> gpu_names(const std::string& nvidia_smi) {
  std::vector<std::string> names;
  const ProcessResult r = quick({nvidia_smi, "--query-gpu=name", "--format=csv,noheader"});
  if (r.exit_code != 0) return names;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (!trim(line).empty()) names.push_back(trim(line));
  }
  return names;
}

nlohmann::ordered_json describe_system(const SystemQuery& q) {
  const std::vector<std::string> gpus = gpu_names(q.nvidia_smi);
  std::string cuda;
  if (!gpus.empty()) {
    // The driver's CUDA version, from nvidia-smi's banner: "CUDA Version: 12.4".
    const ProcessResult r = quick({q.nvidia_smi});
    std::smatch m;
    if (std::regex_search(r.out, m, std::regex(R"(CUDA Version:\s*([0-9.]+))"))) cuda = m[1];
  }
  nlohmann::ordered_json j;
  j["host"] = host_name();
  j["cpu_model"] = cpu_model();
  j["cpu_count"] = std::thread::hardware_concurrency();
  j["gpu_model"] = gpus.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(gpus.front());
  j["device_count"] = gpus.size();
  j["cuda_version"] = cuda;
  j["nccl_version"] = "";
  j["mpi_version"] = q.mpi_version;
  j["link"] = q.link;
  j["link_dilation"] = q.link_dilation;
  return j;
}

}  // namespace dpscale
