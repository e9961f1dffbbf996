// errors.h — the two kinds of failure dpscale distinguishes.
//
// InputError: the user gave something we cannot use (a bad option, a malformed file, a shape
// that does not match). main() prints its message as one line and exits with status 2.
// Anything else (a failed CUDA/MPI call, a bug) is an internal error: also one line, status 1
// on a single rank, and MPI_Abort across a multi-rank job so no peer hangs.
#pragma once

#include <stdexcept>
#include <string>

namespace dpscale {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace dpscale
