// mpi_check.h — MPI_CHECK: every MPI call's return code checked, naming the call, file and line.
// MPI's default error handler already aborts on failure; the check also covers communicators
// whose handler was set to MPI_ERRORS_RETURN, and says where it happened.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace dpscale {

[[noreturn]] inline void mpi_fail(const char* call, int code, const char* file, int line) {
  char msg[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(code, msg, &len);
  throw std::runtime_error(std::string(call) + " failed: " + msg + " at " + file + ":" + std::to_string(line));
}

}  // namespace dpscale

#define MPI_CHECK(call)                                                        \
  do {                                                                         \
    const int rc_ = (call);                                                    \
    if (rc_ != MPI_SUCCESS) ::dpscale::mpi_fail(#call, rc_, __FILE__, __LINE__); \
  } while (0)
