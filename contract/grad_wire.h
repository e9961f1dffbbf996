// grad_wire.h — the gradients' wire format (--grad-comm fp32 | bf16 | fp16) as a fact the
// trainers, the harness and predict share: its name, and the bytes an all-reduce of gradients
// puts on the wire in it, written once. The conversion arithmetic is comm/grad_format.h's.
#pragma once

#include <cstddef>
#include <string>

namespace dpscale {

enum class GradFormat { fp32, bf16, fp16 };

// "fp32" | "bf16" | "fp16" -> the format; std::invalid_argument otherwise (the option parser
// has checked the word already).
GradFormat parse_grad_format(const std::string& name);
const char* grad_format_name(GradFormat f);
// Bytes one gradient element takes on the wire.
inline int grad_format_bytes(GradFormat f) { return f == GradFormat::fp32 ? 4 : 2; }

// Bytes one all-reduce of `count` gradient elements puts on the wire in format `f`, when
// `holds_exact` one of them is the element every format sums alone in fp32 (the loss slot:
// comm/communicator.h, set_grad_format). The one count of wire bytes: the MPI link emulation
// holds each all-reduce for these, the record's bytes per step, per bucket and per all-reduce
// (its bus bandwidth) are these (trainers/grad_sync.h, wire_bytes), and predict's step model
// sends these.
inline size_t grad_wire_bytes(GradFormat f, size_t count, bool holds_exact) {
  const size_t exact = holds_exact && count > 0 ? 1 : 0;
  return (count - exact) * static_cast<size_t>(grad_format_bytes(f)) + exact * sizeof(float);
}

}  // namespace dpscale
