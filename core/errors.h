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

// A bad value of one named option. The complaint reads after any name, so the same check says
// "--epochs must be at least 1 (got 0)" in a trainer and "'options.epochs' must be at least 1
// (got 0)" in a sweep config; a complaint that is not a predicate gets a colon:
// "--link: unknown link 'x' (...)".
class OptionError : public InputError {
 public:
  OptionError(const std::string& name, const std::string& complaint)
      : InputError(named(name, complaint)), complaint_(complaint) {}
  const std::string& complaint() const { return complaint_; }
  // "NAME must ..." / "NAME is ..." / "NAME: other text"
  static std::string named(const std::string& name, const std::string& complaint) {
    const bool predicate = complaint.rfind("must ", 0) == 0 || complaint.rfind("is ", 0) == 0;
    return name + (predicate ? " " : ": ") + complaint;
  }

 private:
  std::string complaint_;
};

}  // namespace dpscale
