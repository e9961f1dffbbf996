// upload_lane.h — host-to-device copies of input batches on a copy stream of their own.
//
// A GPU trains on device memory, so every staged batch goes up before its forward. From
// pageable host memory the driver first copies into a pinned bounce buffer and the copy cannot
// run asynchronously to the host, and a synchronisation per batch stalls the host's kernel
// launches. A lane instead reads pinned host memory (alloc_host) and copies on its own stream:
//
//   upload(dst, src, n)   queued on the copy stream after every compute already queued (which
//                         may still read dst), with no host wait
//   end_batch()           compute queued afterwards waits for the uploads, on the device
//   wait_read()           the host waits until the queued uploads have read their host memory
//                         (before that memory is refilled: the loader's next batch)
#pragma once

#include <cstddef>

namespace dpscale {

class UploadLane {
 public:
  virtual ~UploadLane() = default;
  virtual void* alloc_host(size_t nbytes) = 0;
  virtual void free_host(void* p) noexcept = 0;
  virtual void upload(void* dst, const void* host_src, size_t nbytes) = 0;
  virtual void end_batch() = 0;
  virtual void wait_read() = 0;
};

}  // namespace dpscale
