// Device memory and streams: the CPU answers from core's host allocator, accelerators through
// their backend's device table (a clear "does not support" error when a table lacks one).
#include "ingot/runtime/device_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

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

namespace {

/// A number read from a one-value file (cgroup limits); nullopt when absent or "max".
std::optional<int64_t> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || v < 0) return std::nullopt;
  return static_cast<int64_t>(v);
}

/// /proc/meminfo's value of `key` ("MemTotal") in bytes, 0 when missing.
int64_t meminfo(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::atoll(line.c_str() + key.size() + 1) * 1024;
  return 0;
}

/// The tightest cgroup memory limit minus usage over this process's cgroup and its parents:
/// {limit, left}; nullopt without a limit. v2 ("0::/path": memory.max, memory.current) or v1
/// (the "memory" controller's memory.limit_in_bytes, memory.usage_in_bytes; near 2^63 = none).
std::optional<std::pair<int64_t, int64_t>> cgroup_memory(std::string& bound_by) {
  std::ifstream in("/proc/self/cgroup");
  std::optional<std::pair<int64_t, int64_t>> best;
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    const bool v2 = line.compare(0, a, "0") == 0 && controllers.empty();
    bool v1 = false;
    for (size_t p = 0; p <= controllers.size();) {
      const size_t e = std::min(controllers.find(',', p), controllers.size());
      v1 = v1 || controllers.compare(p, e - p, "memory") == 0;
      p = e + 1;
    }
    if (!v2 && !v1) continue;
    const std::filesystem::path root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const char* limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char* usage_file = v2 ? "memory.current" : "memory.usage_in_bytes";
    for (std::filesystem::path dir = root / std::filesystem::path(path).relative_path();; dir = dir.parent_path()) {
      const auto limit = read_bytes(dir / limit_file);
      if (limit && *limit < (int64_t{1} << 60)) {
        const int64_t left = std::max<int64_t>(0, *limit - read_bytes(dir / usage_file).value_or(0));
        if (!best || left < best->second) {
          best = std::make_pair(*limit, left);
          bound_by = fmt::format("cgroup {}", (dir / limit_file).string());
        }
      }
      if (dir == root || dir.string().size() <= root.string().size()) break;
    }
  }
  return best;
}

}  // namespace

MemoryBudget memory_budget(Device device) {
  MemoryBudget b;
  if (device.is_cpu()) {
    b.total = meminfo("MemTotal");
    b.available = meminfo("MemAvailable");
    b.bound_by = "/proc/meminfo MemAvailable";
    std::string cg;
    if (const auto limit = cgroup_memory(cg); limit && (b.available == 0 || limit->second < b.available)) {
      b.total = b.total > 0 ? std::min(b.total, limit->first) : limit->first;
      b.available = limit->second;
      b.bound_by = cg;
    }
    return b;
  }
  const Backend& backend = device_backend(device);
  if (!backend.offers_memory_info()) return b;
  const auto [free_bytes, total_bytes] =
      on_device(device, [&](const Backend& be) { return be.memory_info(device.index); });
  b.total = total_bytes;
  b.available = free_bytes;
  b.bound_by = fmt::format("backend {} memory_info", backend.name());
  return b;
}

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
