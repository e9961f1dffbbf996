// host_rss.h — a rank's peak resident memory, measured by the kernel (Linux /proc/self).
//
// What a rank holds is what the sharded stages are about; an allocation count says what the
// program asked for, the resident set what the machine gave it (pages released by a stage-3
// rank leave it; a library's hidden buffers join it). The peak (VmHWM) is reset as the timed
// epochs begin, so start-up (the whole initial model, the data) does not hide the steady state.
#pragma once

#include <cstdint>

namespace dpscale {

// Resets this process's peak resident set to its current one (/proc/self/clear_refs, "5").
// False where the kernel offers no reset (then peak_rss_bytes() includes what came before).
bool reset_peak_rss();
// This process's peak resident set in bytes (VmHWM); 0 where unreadable.
int64_t peak_rss_bytes();

}  // namespace dpscale
