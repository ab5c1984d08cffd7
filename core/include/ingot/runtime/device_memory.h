// Device memory and streams, torch.cuda-style, for any device: allocator counters, peak reset,
// empty_cache, synchronize, and the compute stream's native handle (for communicator plugins).
#pragma once

#include <cstdint>
#include <string>

#include "ingot/base/allocator.h"
#include "ingot/tensor/device.h"

namespace ingot {

class Backend;

/// The backend that owns memory on an accelerator `device`: the highest-priority enabled backend
/// of its kind with a device allocator. Throws BackendMissingError when there is none, and Error
/// naming the device and how many exist when the backend does not serve its index.
const Backend& device_backend(Device device);

/// Allocator counters of `device`: core's caching host allocator for the CPU, the device
/// backend's allocator otherwise (device table `memory_stats`).
MemoryStats memory_stats(Device device = Device::cpu());
/// Whether memory_stats(device) has an answer: always on the CPU; on an accelerator when its
/// backend reports its allocator's counters.
bool memory_stats_available(Device device);
/// Sets peak_allocated to the current allocated bytes.
void reset_peak_memory_stats(Device device = Device::cpu());
/// Returns cached, unused blocks to the system or device; live tensors are untouched.
void empty_cache(Device device = Device::cpu());

/// How much memory `device` has for a new run: bytes in all and available now (0 = unknown), and
/// what bounds it. The CPU: /proc/meminfo's MemTotal and MemAvailable, lowered to the cgroup's
/// memory limit (v2 memory.max or v1 memory.limit_in_bytes, the tightest up the hierarchy) minus
/// its usage. An accelerator: its backend's memory_info (cudaMemGetInfo), unknown without one.
struct MemoryBudget {
  int64_t total = 0;
  int64_t available = 0;
  std::string bound_by;  ///< "MemAvailable", "cgroup memory.max", "cudaMemGetInfo" ...
};
MemoryBudget memory_budget(Device device = Device::cpu());

/// Returns once all work queued on `device` is done (a no-op on the CPU, whose ops are synchronous).
void synchronize(Device device);
/// The native handle of `device`'s compute stream (a cudaStream_t on CUDA), valid for the
/// process; nullptr for the CPU, which has no stream.
void* native_stream(Device device);

}  // namespace ingot
