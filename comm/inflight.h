// inflight.h — which of a stream's queued all-reduces holds up a host wait: the words the
// collective watchdog says on a timeout. Host-only, so it is tested without a GPU.
//
// A stream runs its all-reduces in launch order. A host wait for all-reduce #w can only be held
// up by #w or one launched before it: the first of those not done. A later one, not done either,
// is not what the host waits for, and naming it would send the reader to the wrong collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace dpscale {

struct InFlight {
  uint64_t seq = 0;   // the all-reduce's sequence number (the gradients channel's)
  bool done = false;  // its end event has fired
};

// Index into `queued` (launch order) of the all-reduce a wait for #waited is held up by;
// nullopt when every one up to #waited is done (the wait is about to return: name #waited).
inline std::optional<size_t> holding_up(const std::vector<InFlight>& queued, uint64_t waited) {
  for (size_t i = 0; i < queued.size(); ++i) {
    if (queued[i].seq > waited) break;
    if (!queued[i].done) return i;
  }
  return std::nullopt;
}

}  // namespace dpscale
