// Entry points of the nccl_ddp plugin: probe (an NVIDIA driver, a GPU and a loadable NCCL >= 2.14?
// no device context is created) and init (the "nccl" communicator for CUDA tensors, and one line
// naming the NCCL library loaded and its version).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include "comm_timeout.h"
#include "ingot/plugin/sdk.h"
#include "nccl_communicator.h"
#include "nccl_library.h"

namespace {

using ingot::nccl::NcclLibrary;

std::string cuda_version_str(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// The same reasons, in the same words, as the cuda plugin's probe: cudaGetDeviceCount answers
// cudaErrorInsufficientDriver both without libcuda.so.1 and with one too old; the driver version
// tells the two apart.
bool gpu_present(std::string& reason) {
  int count = 0, driver = 0, runtime = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  if (e == cudaSuccess && count > 0) return true;
  if (e == cudaErrorInsufficientDriver || (e != cudaErrorNoDevice && driver == 0)) {
    reason = driver == 0
                 ? "no NVIDIA driver (libcuda.so.1 not found; install the NVIDIA driver to use the GPU)"
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

bool nccl_probe(std::string& reason) {
  if (!gpu_present(reason)) return false;
  try {
    (void)NcclLibrary::instance();
    (void)ingot::nccl::comm_timeout(std::getenv("INGOT_COMM_TIMEOUT_S"));
  } catch (const ingot::sdk::Failure& e) {
    reason = e.what();
    return false;
  }
  return true;
}

void nccl_init(const ingot_host_api* host, ingot::sdk::Components& out) {
  const NcclLibrary& lib = NcclLibrary::instance();
  const auto timeout = ingot::nccl::comm_timeout(std::getenv("INGOT_COMM_TIMEOUT_S"));
  ingot::sdk::log(host, INGOT_LOG_INFO, "nccl_ddp",
                  "nccl_ddp: loaded NCCL " + ingot::nccl::version_string(lib.version) + " (" + lib.path +
                      "), built against " + ingot::nccl::version_string(NCCL_VERSION_CODE) + "; timeout " +
                      ingot::nccl::seconds_text(timeout) + " (INGOT_COMM_TIMEOUT_S)");
  out.add(ingot::sdk::make_communicator<ingot::nccl::NcclCommunicator>("nccl", INGOT_DEVICE_CUDA));
}

}  // namespace

INGOT_PLUGIN("nccl_ddp", "0.1.0",
             "NCCL communicator (nccl) for CUDA tensors: all_reduce, broadcast, all_gather, "
             "reduce_scatter, barrier, send / recv",
             INGOT_KIND_COMMUNICATOR, nccl_probe, nccl_init)
