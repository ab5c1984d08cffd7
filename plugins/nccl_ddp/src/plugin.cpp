// Entry points of the nccl_ddp plugin: probe (an NVIDIA driver, a GPU and a loadable NCCL >= 2.14?
// no device context is created) and init (the "nccl" communicator for CUDA tensors, and one line
// naming the NCCL library loaded and its version).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include "comm_timeout.h"
#include "ingot/plugin/sdk.h"
#include "ingot/plugin/sdk_gpu_probe.h"
#include "nccl_communicator.h"
#include "nccl_library.h"

namespace {

using ingot::nccl::NcclLibrary;

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

bool nccl_probe(std::string& reason) {
  reason = ingot::sdk::gpu_probe_reason(probe_facts());  // the cuda plugin's words (sdk_gpu_probe.h)
  if (!reason.empty()) return false;
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
