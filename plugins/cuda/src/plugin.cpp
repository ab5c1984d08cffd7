// Entry points of the cuda plugin: probe (is there an NVIDIA driver and a device? no context is
// created) and init (the "cuda" backend serving every visible GPU; contexts are made on first use).
#include <cuda_runtime_api.h>

#include <string>

#include "cuda_backend.h"
#include "cuda_check.h"
#include "ingot/plugin/sdk.h"

namespace {

std::string cuda_version_str(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// cudaGetDeviceCount answers error 35 (cudaErrorInsufficientDriver) both when libcuda.so.1 is
// missing and when it is too old; the driver version tells the two apart.
bool cuda_probe(std::string& reason) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  if (e == cudaSuccess && count > 0) return true;
  if (e == cudaErrorInsufficientDriver || (e != cudaErrorNoDevice && driver == 0)) {
    reason = driver == 0 ? "no NVIDIA driver (libcuda.so.1 not found; install the NVIDIA driver to use the GPU)"
                         : "NVIDIA driver too old: it supports CUDA " + cuda_version_str(driver) +
                               ", this plugin was built with CUDA " + cuda_version_str(runtime) + " (update the driver)";
  } else if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
    reason = "no CUDA device (NVIDIA driver for CUDA " + cuda_version_str(driver) +
             " present, but no GPU is visible; check CUDA_VISIBLE_DEVICES)";
  } else {
    reason = std::string("CUDA unavailable: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  }
  return false;
}

void cuda_init(const ingot_host_api* host, ingot::sdk::Components& out) {
  int count = 0;
  INGOT_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 1) throw ingot::sdk::Failure(INGOT_ERR_NO_DEVICE, "cuda: no visible device");
  out.add(ingot::sdk::make_device_backend(new ingot::cuda::CudaBackend(count), "cuda", INGOT_DEVICE_CUDA, 100));
  for (int i = 0; i < count; ++i)
    ingot::sdk::log(host, INGOT_LOG_INFO, "cuda", "cuda backend on device " + std::to_string(i) + ": " +
                                                      ingot::cuda::describe_device(i));
}

}  // namespace

INGOT_PLUGIN("cuda", "0.1.0", "CUDA backend: cuBLASLt matmul, cuDNN convolution, own kernels, caching allocator",
             INGOT_KIND_BACKEND, cuda_probe, cuda_init)
