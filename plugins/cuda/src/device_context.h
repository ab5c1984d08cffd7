// DeviceContext: one GPU's compute stream, library handles (cuBLASLt, cuDNN, created on first use)
// and caching allocator. Ops and copies run on the compute stream unless core names another one.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <mutex>
#include <string>

#include "caching_allocator.h"
#include "ingot/plugin/ingot_plugin.h"

namespace ingot::cuda {

class DeviceContext {
 public:
  explicit DeviceContext(int device);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int device() const { return device_; }
  /// The compute stream; its native handle is what core passes back as ingot_exec_context.stream.
  cudaStream_t stream() const { return stream_; }
  /// The stream a call runs on: the context's when core names one, else the compute stream.
  cudaStream_t stream_for(const ingot_exec_context* ctx) const;
  CachingAllocator& allocator() { return allocator_; }
  const cudaDeviceProp& props() const { return props_; }
  /// "NVIDIA H200 (sm_90, 139.8 GiB)".
  std::string describe() const;

  cublasLtHandle_t cublaslt();
  cudnnHandle_t cudnn();
  /// cuBLASLt's workspace size: 32 MiB, as cuBLAS recommends on Hopper.
  static constexpr size_t kMatmulWorkspaceBytes = size_t(32) << 20;
  /// The compute stream's cuBLASLt workspace (kMatmulWorkspaceBytes), an internal block kept for
  /// the process. Work on another stream takes its own from StreamMemory: sharing one workspace
  /// across streams would let two matmuls overwrite each other's.
  void* matmul_workspace();

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaDeviceProp props_{};
  CachingAllocator allocator_;
  std::mutex mu_;
  cublasLtHandle_t lt_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  void* lt_workspace_ = nullptr;
};

/// "NVIDIA H200 (sm_90, 139.8 GiB)" for device `device`, without creating its context.
std::string describe_device(int device);

/// Records two events around work on a stream and reports the milliseconds between them.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t stream);
  void stop(cudaStream_t stream);
  /// Waits for the stop event.
  float elapsed_ms();

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace ingot::cuda
