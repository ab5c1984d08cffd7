// Device memory and streams: the CPU answers from core's host allocator, accelerators through
// their backend's device table (a clear "does not support" error when a table lacks one).
#include "ingot/runtime/device_memory.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/registry.h"

namespace ingot {
namespace {

MemoryStats from_abi(const ingot_memory_stats& s) {
  MemoryStats m;
  m.allocated = s.allocated;
  m.reserved = s.reserved;
  m.peak_allocated = s.peak_allocated;
  m.allocations = s.allocations;
  m.cache_hits = s.cache_hits;
  return m;
}

// Errors of an accelerator call name the device first: "cuda:0: backend cuda: ...".
template <class Fn>
auto on_device(Device device, Fn&& fn) -> decltype(fn(device_backend(device))) {
  const Backend& b = device_backend(device);  // checks the index: its error names the device already
  try {
    return fn(b);
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(fmt::format("{}: {}", device.str(), e.what()));
  } catch (const PluginError& e) {
    throw PluginError(fmt::format("{}: {}", device.str(), e.what()));
  } catch (const BackendMissingError&) {
    throw;
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", device.str(), e.what()), e.exit_code());
  }
}

}  // namespace

const Backend& device_backend(Device device) { return BackendRegistry::instance().device_backend(device); }

MemoryStats memory_stats(Device device) {
  if (device.is_cpu()) return host_allocator().stats();
  return on_device(device, [&](const Backend& b) { return from_abi(b.memory_stats(device.index)); });
}

bool memory_stats_available(Device device) {
  return device.is_cpu() || on_device(device, [](const Backend& b) { return b.offers_memory_stats(); });
}

void reset_peak_memory_stats(Device device) {
  if (device.is_cpu()) return host_allocator().reset_peak();
  on_device(device, [&](const Backend& b) { b.reset_peak_memory_stats(device.index); });
}

void empty_cache(Device device) {
  if (device.is_cpu()) return host_allocator().empty_cache();
  on_device(device, [&](const Backend& b) { b.empty_cache(device.index); });
}

void synchronize(Device device) {
  if (device.is_cpu()) return;
  on_device(device, [&](const Backend& b) { b.synchronize(device.index); });
}

void* native_stream(Device device) {
  if (device.is_cpu()) return nullptr;
  return on_device(device, [&](const Backend& b) { return b.native_stream(device.index); });
}

}  // namespace ingot
