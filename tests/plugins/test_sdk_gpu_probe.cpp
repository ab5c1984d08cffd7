// The SDK's wording of why a GPU plugin cannot run (sdk_gpu_probe.h), shared by the cuda and
// nccl_ddp probes: each outcome of the runtime's device count, with no GPU needed.
#include <catch2/catch.hpp>

#include <string>

#include "ingot/plugin/sdk_gpu_probe.h"

namespace {

using ingot::sdk::gpu_probe_reason;
using ingot::sdk::GpuProbeFacts;

TEST_CASE("sdk: a GPU probe names the missing driver, an old one, no device or the runtime's error", "[plugins][sdk]") {
  GpuProbeFacts f;
  f.runtime_version = 13000;
  f.call_ok = true;
  f.device_count = 2;
  f.driver_version = 12020;
  CHECK(gpu_probe_reason(f).empty());

  GpuProbeFacts none = f;  // the runtime says "insufficient driver" without libcuda.so.1 too
  none.call_ok = false, none.device_count = 0, none.insufficient_driver = true, none.driver_version = 0;
  CHECK(gpu_probe_reason(none) ==
        "no NVIDIA driver (libcuda.so.1 not found; install the NVIDIA driver to use the GPU)");
  none.insufficient_driver = false;  // any other failure without a driver is the same
  none.error = "cudaErrorUnknown: unknown error";
  CHECK(gpu_probe_reason(none).rfind("no NVIDIA driver", 0) == 0);

  GpuProbeFacts old = none;
  old.insufficient_driver = true, old.driver_version = 12020;
  CHECK(gpu_probe_reason(old) ==
        "NVIDIA driver too old: it supports CUDA 12.2, this plugin was built with CUDA 13.0 (update the driver)");

  GpuProbeFacts hidden = f;  // counted none, or failed with "no device": the same words
  hidden.device_count = 0;
  const std::string no_gpu =
      "no CUDA device (NVIDIA driver for CUDA 12.2 present, but no GPU is visible; check CUDA_VISIBLE_DEVICES)";
  CHECK(gpu_probe_reason(hidden) == no_gpu);
  hidden.call_ok = false, hidden.no_device_error = true;
  CHECK(gpu_probe_reason(hidden) == no_gpu);
  hidden.driver_version = 0;  // "no device" is never read as a missing driver
  CHECK(gpu_probe_reason(hidden).rfind("no CUDA device", 0) == 0);

  GpuProbeFacts broken = f;
  broken.call_ok = false, broken.device_count = 0, broken.error = "cudaErrorDevicesUnavailable: busy";
  CHECK(gpu_probe_reason(broken) == "CUDA unavailable: cudaErrorDevicesUnavailable: busy");
}

}  // namespace
