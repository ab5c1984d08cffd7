// One check per vendor API (CUDA runtime, cuBLAS, cuDNN): a failed call throws sdk::Failure
// naming the call, the library's own error text and where it happened.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
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
  fail_call(code, "cuBLAS", call, std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s), file, line);
}

inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const int32_t code = s == CUDNN_STATUS_NOT_SUPPORTED ? INGOT_ERR_UNSUPPORTED
                       : s == CUDNN_STATUS_ALLOC_FAILED ? INGOT_ERR_OUT_OF_MEMORY
                                                         : INGOT_ERR_RUNTIME;
  fail_call(code, "cuDNN", call, cudnnGetErrorString(s), file, line);
}

}  // namespace ingot::cuda

#define INGOT_CUDA_CHECK(call) ::ingot::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define INGOT_CUBLAS_CHECK(call) ::ingot::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define INGOT_CUDNN_CHECK(call) ::ingot::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
