// buckets.cpp — the bucket assignment.
#include "buckets.h"

namespace dpscale {

std::vector<Bucket> assign_buckets(const ParamLayout& layout, double bucket_cap_mb, double first_bucket_mb) {
  const int64_t cap = static_cast<int64_t>(bucket_cap_mb * kMiB);
  int64_t limit = static_cast<int64_t>(first_bucket_mb * kMiB);
  std::vector<Bucket> buckets;
  Bucket cur;
  bool open = false;
  auto close = [&] {
    buckets.push_back(cur);
    open = false;
    limit = cap;  // only the first bucket uses the first-bucket limit
  };
  for (const TensorView& t : layout.tensors()) {
    if (open && cur.nbytes() + t.nbytes() > limit) close();
    if (!open) {
      cur = Bucket{t.index, t.index, t.offset, 0};
      open = true;
    }
    cur.last_tensor = t.index;
    cur.count += t.count;
    if (cur.nbytes() >= limit) close();  // full, or one tensor at least as large as the cap
  }
  if (open) buckets.push_back(cur);
  return buckets;
}

}  // namespace dpscale
