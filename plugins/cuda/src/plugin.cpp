// Entry points of the cuda plugin: probe (an NVIDIA driver and a device of compute capability 8.0
// or newer? no context is created) and init (the "cuda" backend serving those GPUs, and one line
// naming the CUDA libraries and driver actually loaded).
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_backend.h"
#include "cuda_check.h"
#include "device_requirements.h"
#include "ingot/plugin/sdk.h"
#include "ingot/plugin/sdk_gpu_probe.h"

namespace {

using ingot::cuda::DeviceSelection;
using ingot::sdk::cuda_version_str;

// cuBLASLt and cuDNN 9 both encode major * 10000 + minor * 100 + patch.
std::string lib_version_str(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." + std::to_string(v % 100);
}

// The file the dynamic loader took `fn` from, e.g. /usr/local/cuda/lib/libcudnn.so.9.
template <class Fn>
std::string library_path(Fn* fn) {
  void* addr = nullptr;
  static_assert(sizeof(addr) == sizeof(fn), "function and data pointers differ in size");
  std::memcpy(&addr, &fn, sizeof(addr));
  Dl_info info{};
  return dladdr(addr, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "path unknown";
}

// The kernel module's version ("580.65.06") from /proc, or empty where it cannot be read.
std::string kernel_module_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line, word;
  if (!std::getline(f, line)) return {};
  const size_t at = line.find("Module");  // "... Kernel Module  580.65.06  Release Build ..."
  std::istringstream words(at == std::string::npos ? line : line.substr(at));
  while (words >> word)
    if (!word.empty() && word[0] >= '0' && word[0] <= '9' && word.find('.') != std::string::npos) return word;
  return {};
}

std::string loaded_libraries() {
  int runtime = 0, driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaGetLastError();
  const std::string module = kernel_module_version();
  return "cuda: loaded cudart " + cuda_version_str(runtime) + ", cuBLASLt " + lib_version_str(cublasLtGetVersion()) +
         " (" + library_path(&cublasLtGetVersion) + "), cuDNN " + lib_version_str(cudnnGetVersion()) + " (" +
         library_path(&cudnnGetVersion) + "), driver " +
         (module.empty() ? "for CUDA " + cuda_version_str(driver)
                         : module + " (CUDA " + cuda_version_str(driver) + ")");
}

// Reads each device's compute capability without creating a context.
DeviceSelection select_devices(int count) {
  std::vector<ingot::cuda::DeviceCapability> devices;
  for (int i = 0; i < count; ++i) {
    ingot::cuda::DeviceCapability d;
    (void)cudaDeviceGetAttribute(&d.major, cudaDevAttrComputeCapabilityMajor, i);
    (void)cudaDeviceGetAttribute(&d.minor, cudaDevAttrComputeCapabilityMinor, i);
    (void)cudaGetLastError();
    try {
      d.description = ingot::cuda::describe_device(i);
    } catch (const std::exception&) {
      d.description = "(properties unreadable)";
    }
    devices.push_back(d);
  }
  return ingot::cuda::select_devices(devices, std::getenv("CUDA_VISIBLE_DEVICES"));
}

// The device count call's outcome and the versions, for the SDK's shared wording of the reason.
ingot::sdk::GpuProbeFacts probe_facts() {
  ingot::sdk::GpuProbeFacts f;
  const cudaError_t e = cudaGetDeviceCount(&f.device_count);
  (void)cudaGetLastError();
  (void)cudaDriverGetVersion(&f.driver_version);
  (void)cudaRuntimeGetVersion(&f.runtime_version);
  f.call_ok = e == cudaSuccess;
  f.no_device_error = e == cudaErrorNoDevice;
  f.insufficient_driver = e == cudaErrorInsufficientDriver;
  if (!f.call_ok) f.error = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  return f;
}

// No usable GPU: the reason in the words nccl_ddp's probe uses too (sdk_gpu_probe.h).
bool cuda_probe(std::string& reason) {
  const ingot::sdk::GpuProbeFacts f = probe_facts();
  reason = ingot::sdk::gpu_probe_reason(f);
  if (!reason.empty()) return false;
  const DeviceSelection s = select_devices(f.device_count);
  if (s.served > 0) return true;
  reason = "no CUDA device this plugin can use: " + s.problem;
  return false;
}

void cuda_init(const ingot_host_api* host, ingot::sdk::Components& out) {
  int count = 0;
  INGOT_CUDA_CHECK(cudaGetDeviceCount(&count));
  const DeviceSelection s = select_devices(count);
  if (s.served < 1)
    throw ingot::sdk::Failure(INGOT_ERR_NO_DEVICE, "cuda: no CUDA device this plugin can use: " + s.problem);
  ingot::sdk::log(host, INGOT_LOG_INFO, "cuda", loaded_libraries());
  if (!s.problem.empty()) ingot::sdk::log(host, INGOT_LOG_WARN, "cuda", "cuda: " + s.problem);
  out.add(ingot::sdk::make_device_backend(new ingot::cuda::CudaBackend(s.served), "cuda", INGOT_DEVICE_CUDA, 100));
  for (int i = 0; i < s.served; ++i)
    ingot::sdk::log(host, INGOT_LOG_INFO, "cuda", "cuda backend on device " + std::to_string(i) + ": " +
                                                      ingot::cuda::describe_device(i));
}

}  // namespace

INGOT_PLUGIN("cuda", "0.1.0", "CUDA backend: cuBLASLt matmul, cuDNN convolution, own kernels, caching allocator",
             INGOT_KIND_BACKEND, cuda_probe, cuda_init)
