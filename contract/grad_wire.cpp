// grad_wire.cpp — the wire format's names (grad_wire.h).
#include "grad_wire.h"

#include <stdexcept>

namespace dpscale {

GradFormat parse_grad_format(const std::string& name) {
  if (name == "fp32") return GradFormat::fp32;
  if (name == "bf16") return GradFormat::bf16;
  if (name == "fp16") return GradFormat::fp16;
  throw std::invalid_argument("unknown gradient format '" + name + "'");
}

const char* grad_format_name(GradFormat f) {
  switch (f) {
    case GradFormat::bf16: return "bf16";
    case GradFormat::fp16: return "fp16";
    default: return "fp32";
  }
}

}  // namespace dpscale
