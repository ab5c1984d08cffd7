// One check per vendor API (CUDA runtime, NCCL): a failed call throws sdk::Failure with one line
// naming the call, the library's own error text (for NCCL also ncclGetLastError's detail) and where.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "ingot/plugin/sdk.h"
#include "nccl_library.h"

namespace ingot::nccl {

/// `text` on one line: newlines become "; ", trailing blanks go.
inline std::string one_line(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

/// The ingot status code of an NCCL result.
inline int32_t nccl_error_code(ncclResult_t r) {
  return r == ncclInvalidArgument || r == ncclInvalidUsage ? INGOT_ERR_INVALID_ARGUMENT : INGOT_ERR_RUNTIME;
}

/// "ncclAllReduce failed: remote process exited or there was a network error (NCCL ncclRemoteError:
/// <last error>)" for result `r` of `call` on `comm` (NULL before the communicator exists).
inline std::string nccl_failure_text(const NcclLibrary& lib, ncclResult_t r, ncclComm_t comm, const char* call) {
  static const char* const names[] = {"ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
                                      "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                      "ncclRemoteError",   "ncclInProgress"};
  const std::string name = r >= 0 && r < ncclNumResults ? names[r] : "result " + std::to_string(static_cast<int>(r));
  std::string text = std::string(call) + " failed: NCCL " + name + ": " + lib.ncclGetErrorString(r);
  const char* last = lib.ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') text += " (" + one_line(last) + ")";
  return text;
}

[[noreturn]] inline void fail_nccl(const NcclLibrary& lib, ncclResult_t r, ncclComm_t comm, const char* call) {
  throw sdk::Failure(nccl_error_code(r), "nccl_ddp: " + nccl_failure_text(lib, r, comm, call));
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so later calls are not blamed
  const int32_t code = e == cudaErrorMemoryAllocation ? INGOT_ERR_OUT_OF_MEMORY : INGOT_ERR_RUNTIME;
  throw sdk::Failure(code, std::string("nccl_ddp: ") + call + " failed: CUDA " + cudaGetErrorName(e) + ": " +
                               cudaGetErrorString(e) + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace ingot::nccl

#define INGOT_NCCL_CUDA_CHECK(call) ::ingot::nccl::check_cuda((call), #call, __FILE__, __LINE__)
