// Why a GPU plugin built on the CUDA runtime cannot run here, in the same words for every such
// plugin (cuda, nccl_ddp). The plugin asks its runtime and passes the answers as plain numbers, so
// the SDK includes no vendor header. Header-only, C++17.
#pragma once

#include <string>

namespace ingot::sdk {

/// What a probe learned from the runtime's device count, driver and runtime versions.
struct GpuProbeFacts {
  bool call_ok = false;              ///< the device count call succeeded
  int device_count = 0;              ///< devices it counted
  bool no_device_error = false;      ///< it failed with "no device" (cudaErrorNoDevice)
  bool insufficient_driver = false;  ///< it failed with "insufficient driver": none, or one too old
  int driver_version = 0;            ///< CUDA version the driver supports (12020 = 12.2); 0 = no driver
  int runtime_version = 0;           ///< CUDA version the plugin was built with
  std::string error;                 ///< the runtime's error name and text, for any other failure
};

/// "12.2" for a CUDA version number 12020.
inline std::string cuda_version_str(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

/// "" when devices were counted, else the reason: no driver (the runtime answers "insufficient
/// driver" without libcuda.so.1 too; a driver version of 0 tells the two apart), a driver too old
/// for the runtime, no visible device, or the runtime's own error.
inline std::string gpu_probe_reason(const GpuProbeFacts& f) {
  if (f.call_ok && f.device_count > 0) return "";
  if (f.insufficient_driver || (!f.no_device_error && f.driver_version == 0)) {
    if (f.driver_version == 0)
      return "no NVIDIA driver (libcuda.so.1 not found; install the NVIDIA driver to use the GPU)";
    return "NVIDIA driver too old: it supports CUDA " + cuda_version_str(f.driver_version) +
           ", this plugin was built with CUDA " + cuda_version_str(f.runtime_version) + " (update the driver)";
  }
  if (f.no_device_error || f.call_ok)
    return "no CUDA device (NVIDIA driver for CUDA " + cuda_version_str(f.driver_version) +
           " present, but no GPU is visible; check CUDA_VISIBLE_DEVICES)";
  return "CUDA unavailable: " + f.error;
}

}  // namespace ingot::sdk
