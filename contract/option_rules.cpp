// option_rules.cpp — the rules of option_rules.h.
#include "option_rules.h"

#include <filesystem>

#include "contract/diagnosis_options.h"
#include "contract/link_model.h"
#include "core/errors.h"

namespace dpscale {

void check_option_rules(const TrainOptions& o, int world_size) {
  if (o.share_gpu && o.device.backend == "cpu") {
    throw InputError("--share-gpu shares a GPU between NCCL ranks: it does not combine with --backend cpu (MPI ranks share no GPU)");
  }
  if (o.share_gpu && o.allreduce == "hier") {
    throw InputError("--share-gpu does not combine with --allreduce hier (hier is MPI's, on the CPU backend; NCCL runs the shared GPU's all-reduces)");
  }
  const LinkModel link = parse_link(o.link);
  if (link.ranks_per_node > 0 && world_size % link.ranks_per_node != 0) {
    throw InputError("--link " + o.link + ": ranks-per-node=" + std::to_string(link.ranks_per_node) +
                     " does not divide the " + std::to_string(world_size) + " ranks into whole nodes");
  }
  if (o.allreduce == "hier" && o.grad_comm != "fp32") {
    throw InputError("--grad-comm " + o.grad_comm + " does not combine with --allreduce hier (use ring, star or native)");
  }
}

void check_diagnosis_options(const TrainOptions& o, int world_size, Backend backend) {
  const InjectDelay d = parse_inject_delay(o.inject_delay);
  if (!o.trace_path.empty()) {
    std::filesystem::path dir = std::filesystem::path(o.trace_path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir)) throw InputError("--trace: directory '" + dir.string() + "' does not exist");
  }
  if (d.enabled() && d.cause == DelayCause::link && backend != Backend::cpu) {
    throw InputError("--inject-delay " + o.inject_delay + ": a slower link is emulated on MPI (--backend cpu) only");
  }
  if (d.enabled() && d.rank >= world_size) {
    throw InputError("--inject-delay: rank " + std::to_string(d.rank) + " does not exist (the job has " +
                     std::to_string(world_size) + " ranks: 0.." + std::to_string(world_size - 1) + ")");
  }
}

}  // namespace dpscale
