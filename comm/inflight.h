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

// A queued all-reduce as its stream knows it: with an end event of its own or not (naive's batch
// times only its last call while the call log is off: nccl_communicator.cpp), and whether that
// event has fired.
struct Queued {
  uint64_t seq = 0;
  bool timed = true;
  bool end_fired = false;  // read only when timed
};

// Each one's InFlight, in launch order. The stream runs them in order, so one without an end
// event is done when the next timed one is; one with no timed call after it (a batch always
// ends with one) is taken as not done, so that a wait names it rather than pass it by.
inline std::vector<InFlight> in_flight_of(const std::vector<Queued>& queued) {
  std::vector<InFlight> v(queued.size());
  bool done = false;
  for (size_t i = queued.size(); i-- > 0;) {
    if (queued[i].timed) done = queued[i].end_fired;
    v[i] = {queued[i].seq, done};
  }
  return v;
}

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
