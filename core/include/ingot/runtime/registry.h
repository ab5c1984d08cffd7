// BackendRegistry: every backend of the process (reference first, then plugins), and the
// selection rule: the highest-priority enabled backend of the device kind that supports an op.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ingot/base/allocator.h"
#include "ingot/runtime/backend.h"

namespace ingot {

class BackendRegistry {
 public:
  /// The process's registry; the built-in reference backend is always present.
  static BackendRegistry& instance();

  /// Registers a backend (kept for the process lifetime) after checking its tables; throws
  /// PluginError naming the plugin and what is wrong.
  Backend& add(const ingot_backend* table, const std::string& plugin);
  const std::vector<std::unique_ptr<Backend>>& backends() const { return backends_; }
  Backend* find(const std::string& name) const;
  const Backend& reference() const { return *backends_.front(); }
  /// Backends of one device kind, enabled only, highest priority first.
  const std::vector<const Backend*>& candidates(DeviceKind kind) const;
  /// Enables only `names` (plus the reference, always the last resort), or all when empty.
  void restrict_to(const std::vector<std::string>& names);
  /// The backend holding the memory of an accelerator (highest priority first), after checking
  /// that it serves `device`'s index; throws BackendMissingError when none does.
  const Backend& device_backend(Device device) const;
  /// Allocator for a device: core's caching host allocator for CPU, else one per (kind, index)
  /// over the device backend's memory, each behind a GuardedAllocator (retry after emptying the
  /// cache, explained out-of-memory errors, memory tracking). Throws for an index the backend
  /// does not serve.
  Allocator& allocator(Device device);

 private:
  BackendRegistry();
  void rebuild();
  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<const Backend*> by_kind_[2];
  std::mutex allocators_mu_;
  std::map<std::pair<int32_t, int32_t>, std::unique_ptr<Allocator>> device_allocators_;  // by (kind, index)
};

}  // namespace ingot
