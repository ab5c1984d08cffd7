// DeviceContext: creates the compute stream on init and the library handles on first use.
#include "device_context.h"

#include <cstdio>

#include "cuda_check.h"

namespace ingot::cuda {

namespace {
// Creating the stream happens before the allocator needs it, so it is a member initialiser helper.
cudaStream_t make_stream(int device) {
  INGOT_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  INGOT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}
}  // namespace

DeviceContext::DeviceContext(int device)
    : device_(device), stream_(make_stream(device)), allocator_(device, stream_) {
  INGOT_CUDA_CHECK(cudaGetDeviceProperties(&props_, device));
}

DeviceContext::~DeviceContext() {
  // Never destroyed while the process runs (plugins are never unloaded); best effort at exit.
  if (lt_ != nullptr) (void)cublasLtDestroy(lt_);
  if (dnn_ != nullptr) (void)cudnnDestroy(dnn_);
  if (lt_workspace_ != nullptr) allocator_.release(lt_workspace_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

cudaStream_t DeviceContext::stream_for(const ingot_exec_context* ctx) const {
  if (ctx != nullptr && ctx->struct_size >= sizeof(ingot_exec_context) && ctx->stream != nullptr)
    return static_cast<cudaStream_t>(ctx->stream);
  return stream_;
}

namespace {
std::string describe_props(const cudaDeviceProp& p) {
  char gib[32];
  std::snprintf(gib, sizeof(gib), "%.1f", static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " + gib + " GiB)";
}
}  // namespace

std::string DeviceContext::describe() const { return describe_props(props_); }

std::string describe_device(int device) {
  cudaDeviceProp p{};
  INGOT_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return describe_props(p);
}

cublasLtHandle_t DeviceContext::cublaslt() {
  std::lock_guard<std::mutex> lock(mu_);
  if (lt_ == nullptr) INGOT_CUBLAS_CHECK(cublasLtCreate(&lt_));
  return lt_;
}

cudnnHandle_t DeviceContext::cudnn() {
  std::lock_guard<std::mutex> lock(mu_);
  if (dnn_ == nullptr) {
    INGOT_CUDA_CHECK(cudaSetDevice(device_));
    INGOT_CUDNN_CHECK(cudnnCreate(&dnn_));
    INGOT_CUDNN_CHECK(cudnnSetStream(dnn_, stream_));
  }
  return dnn_;
}

void* DeviceContext::matmul_workspace() {
  std::lock_guard<std::mutex> lock(mu_);
  if (lt_workspace_ == nullptr) lt_workspace_ = allocator_.allocate(kMatmulWorkspaceBytes, stream_, BlockUse::Internal);
  return lt_workspace_;
}

EventTimer::EventTimer() {
  INGOT_CUDA_CHECK(cudaEventCreate(&start_));
  INGOT_CUDA_CHECK(cudaEventCreate(&stop_));
}

EventTimer::~EventTimer() {
  (void)cudaEventDestroy(start_);
  (void)cudaEventDestroy(stop_);
}

void EventTimer::start(cudaStream_t stream) { INGOT_CUDA_CHECK(cudaEventRecord(start_, stream)); }
void EventTimer::stop(cudaStream_t stream) { INGOT_CUDA_CHECK(cudaEventRecord(stop_, stream)); }

float EventTimer::elapsed_ms() {
  INGOT_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  INGOT_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

}  // namespace ingot::cuda
