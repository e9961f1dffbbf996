// buckets.h — DDP-style gradient buckets over the backward-ordered flat gradient buffer.
//
// As PyTorch DDP: tensors are taken in backward order; boundaries fall between tensors; the
// first bucket is capped at first_bucket_mb (default 1 MiB, so the first all-reduce starts
// early), every later one at bucket_cap_mb (default 25 MiB). Unlike PyTorch, which closes a
// bucket only after it has overflowed, a bucket here never exceeds its cap: a tensor that would
// overflow it starts the next bucket, and a tensor larger than the cap sits alone in its own.
// Because the flat buffer is in backward order, every bucket is one contiguous slice. The caps
// are judged on the tensors' own bytes, as PyTorch judges them, so padding never moves a
// boundary; the slice a bucket all-reduces also holds the layout's zero padding between its
// tensors (under 256 bytes a tensor), since one call needs one contiguous range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/param_layout.h"

namespace dpscale {

struct Bucket {
  int first_tensor = 0;  // indices into ParamLayout::tensors(), inclusive
  int last_tensor = 0;
  int64_t offset = 0;    // floats into the gradient buffer
  int64_t count = 0;     // floats of the slice: its tensors and the padding between them
                         // (not the loss slot); what its all-reduce sends
  int64_t payload = 0;   // floats of its tensors alone: what the caps are judged on
  int64_t nbytes() const { return count * static_cast<int64_t>(sizeof(float)); }
  int64_t payload_bytes() const { return payload * static_cast<int64_t>(sizeof(float)); }
  int n_tensors() const { return last_tensor - first_tensor + 1; }
};

constexpr double kMiB = 1024.0 * 1024.0;

// --bucket-rule:
//   strict  (default) a bucket never exceeds its cap (above): its size is the cap a user sets,
//           so the bucket-cap sweep measures what it says
//   ddp     PyTorch DDP's rule: tensors are added until the bucket reaches or crosses the cap,
//           then it closes: the tensor that crosses the cap stays in it (fewer, larger buckets)
enum class BucketRule { strict, ddp };
BucketRule parse_bucket_rule(const std::string& name);  // std::invalid_argument if unknown

// Caps are in MiB and must be > 0 (checked by the option parser).
std::vector<Bucket> assign_buckets(const ParamLayout& layout, double bucket_cap_mb, double first_bucket_mb,
                                   BucketRule rule = BucketRule::strict);

}  // namespace dpscale
