// twonode_support.cpp — see twonode_support.h.
#include "twonode_support.h"

#include "harness/common/subprocess.h"

namespace dpscale::test {

std::string scripts_dir() { return std::string(DPSCALE_SOURCE_DIR) + "/scripts"; }

std::optional<std::string> twonode_unavailable() {
  ProcessOptions opts;
  opts.timeout_s = 30;
  const ProcessResult status = run_process({scripts_dir() + "/emulated-nodes.sh", "status"}, opts);
  if (status.exit_code == 0) return std::nullopt;
  const ProcessResult check = run_process({scripts_dir() + "/emulated-nodes.sh", "check"}, opts);
  if (check.exit_code == 77) {
    std::string why = check.out;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return "two emulated nodes cannot be made here: " + why;
  }
  return std::string();  // could be made, but are not up: a failure
}

std::vector<std::string> ns_mpirun_argv(int np, int per_node, const std::string& exe, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {scripts_dir() + "/ns-mpirun", "-np", std::to_string(np)};
  if (per_node > 0) {
    argv.insert(argv.end(), {"--npernode", std::to_string(per_node)});
  } else {
    argv.insert(argv.end(), {"--map-by", "node"});
  }
  argv.push_back(exe);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace dpscale::test
