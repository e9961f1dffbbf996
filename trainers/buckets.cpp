// buckets.cpp — the bucket assignment.
#include "buckets.h"

#include <limits>
#include <stdexcept>

namespace dpscale {

namespace {
// MiB -> bytes, saturating: a cap beyond int64 (e.g. --bucket-cap-mb 1e30) means "no limit".
// A plain cast of such a double is undefined and on x86 gives INT64_MIN, a negative cap that
// put every tensor in a bucket of its own.
int64_t cap_bytes(double mb) {
  const double bytes = mb * kMiB;
  return bytes >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(bytes);
}
}  // namespace

BucketRule parse_bucket_rule(const std::string& name) {
  if (name == "strict") return BucketRule::strict;
  if (name == "ddp") return BucketRule::ddp;
  throw std::invalid_argument("unknown bucket rule '" + name + "'");
}

std::vector<Bucket> assign_buckets(const ParamLayout& layout, double bucket_cap_mb, double first_bucket_mb,
                                   BucketRule rule) {
  const int64_t cap = cap_bytes(bucket_cap_mb);
  int64_t limit = cap_bytes(first_bucket_mb);
  std::vector<Bucket> buckets;
  Bucket cur;
  bool open = false;
  auto close = [&] {
    buckets.push_back(cur);
    open = false;
    limit = cap;  // only the first bucket uses the first-bucket limit
  };
  for (const FlatTensor& t : layout.tensors()) {
    if (rule == BucketRule::strict && open && cur.payload_bytes() + t.nbytes() > limit) close();
    if (!open) {
      cur = Bucket{t.index, t.index, t.offset, 0, 0};
      open = true;
    }
    cur.last_tensor = t.index;
    cur.count = t.offset + t.count - cur.offset;  // through the padding before t
    cur.payload += t.count;
    if (cur.payload_bytes() >= limit) close();  // full, or one tensor at least as large as the cap
  }
  if (open) buckets.push_back(cur);
  return buckets;
}

}  // namespace dpscale
