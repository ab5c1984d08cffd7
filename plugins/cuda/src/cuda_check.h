// One check per vendor API (CUDA runtime, cuBLASLt, cuDNN): a failed call throws sdk::Failure
// naming the call, the library's own error text and where it happened.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "ingot/plugin/sdk.h"

namespace ingot::cuda {

[[noreturn]] inline void fail_call(int32_t code, const char* lib, const char* call, const std::string& text,
                                   const char* file, int line) {
  throw sdk::Failure(code, std::string("cuda: ") + call + " failed: " + lib + " " + text + " (" + file + ":" +
                               std::to_string(line) + ")");
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so later calls are not blamed
  const int32_t code = e == cudaErrorMemoryAllocation ? INGOT_ERR_OUT_OF_MEMORY : INGOT_ERR_RUNTIME;
  fail_call(code, "CUDA", call, std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e), file, line);
}

inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const int32_t code = s == CUBLAS_STATUS_NOT_SUPPORTED ? INGOT_ERR_UNSUPPORTED
                       : s == CUBLAS_STATUS_ALLOC_FAILED ? INGOT_ERR_OUT_OF_MEMORY
                                                          : INGOT_ERR_RUNTIME;
  // cuBLASLt's own names: libcublas is not loaded for error strings alone.
  fail_call(code, "cuBLASLt", call, std::string(cublasLtGetStatusName(s)) + ": " + cublasLtGetStatusString(s), file,
            line);
}

/// cuDNN 9 statuses are category (thousands) + detail, e.g. NOT_SUPPORTED_SHAPE = NOT_SUPPORTED + 2.
inline int32_t cudnn_error_code(cudnnStatus_t s) {
  if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED) return INGOT_ERR_UNSUPPORTED;
  if (s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
      s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
    return INGOT_ERR_OUT_OF_MEMORY;
  return INGOT_ERR_RUNTIME;
}

inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  // The last error string says what the status cannot, e.g. which sub-library (libcudnn_cnn.so.9)
  // failed to load.
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string text = cudnnGetErrorString(s);
  if (detail[0] != '\0') text += std::string(" (") + detail + ")";
  fail_call(cudnn_error_code(s), "cuDNN", call, text, file, line);
}

}  // namespace ingot::cuda

#define INGOT_CUDA_CHECK(call) ::ingot::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define INGOT_CUBLAS_CHECK(call) ::ingot::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define INGOT_CUDNN_CHECK(call) ::ingot::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
