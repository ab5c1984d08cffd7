// BackendRegistry: the reference backend plus every plugin backend, ordered for selection.
#include "ingot/runtime/registry.h"

#include <algorithm>
#include <cstddef>

#include "backends/reference/reference_backend.h"
#include "ingot/base/allocator.h"
#include "ingot/base/error.h"
#include "ingot/runtime/guarded_allocator.h"

namespace ingot {
namespace {

/// Memory of one device straight from its backend (device backends cache internally).
class BackendAllocator final : public Allocator {
 public:
  BackendAllocator(const Backend& b, int32_t index) : backend_(b), index_(index) {}
  void* allocate(size_t bytes) override {
    void* p = backend_.alloc(index_, bytes);
    stats_.allocations++;
    stats_.allocated += static_cast<int64_t>(bytes);
    stats_.reserved = stats_.allocated;  // the backend's cache is not visible from here
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    backend_.free(index_, ptr);
    stats_.allocated -= static_cast<int64_t>(bytes);
    stats_.reserved = stats_.allocated;
  }
  MemoryStats stats() const override { return stats_; }
  void reset_peak() override { stats_.peak_allocated = stats_.allocated; }
  // What the backend caches is what the retry after an out-of-memory error can give back.
  void empty_cache() override {
    if (backend_.offers_memory_stats()) backend_.empty_cache(index_);
  }

 private:
  const Backend& backend_;
  int32_t index_;
  MemoryStats stats_;
};

// The entries every table of ABI 2.0 holds; entries a later minor appends are read through
// INGOT_TABLE_HAS.
constexpr size_t kMinBackendSize = offsetof(ingot_backend, compute) + sizeof(ingot_backend::compute);
constexpr size_t kMinComputeSize = offsetof(ingot_compute_table, execute) + sizeof(ingot_compute_table::execute);
constexpr size_t kMinDeviceSize = offsetof(ingot_device_table, copy) + sizeof(ingot_device_table::copy);

/// Why a backend table cannot be registered ("" when it can).
std::string table_problem(const ingot_backend* t) {
  if (t == nullptr) return "backend table is NULL";
  if (t->struct_size < kMinBackendSize)
    return fmt::format("backend table is too short (struct_size {})", t->struct_size);
  if (t->device == nullptr || t->compute == nullptr) return "backend has no device or no compute table";
  const ingot_compute_table& c = *t->compute;
  if (c.struct_size < kMinComputeSize || c.supports == nullptr || c.execute == nullptr)
    return fmt::format("compute table is incomplete (struct_size {})", c.struct_size);
  const ingot_device_table& d = *t->device;
  if (d.struct_size < kMinDeviceSize || d.device_count == nullptr)
    return fmt::format("device table is incomplete (struct_size {})", d.struct_size);
  if (d.device_kind != INGOT_DEVICE_CPU && d.device_kind != INGOT_DEVICE_CUDA)
    return fmt::format("unknown device kind {}", d.device_kind);
  const bool memory = d.alloc != nullptr && d.free != nullptr && d.copy != nullptr;
  if (d.device_kind == INGOT_DEVICE_CPU && (d.alloc != nullptr || d.free != nullptr))
    return "a host backend has memory entries (host memory belongs to core; leave alloc and free NULL)";
  if (d.device_kind != INGOT_DEVICE_CPU && !memory) return "a device backend needs alloc, free and copy";
  const int32_t count = d.device_count(d.self);
  if (count < 1 || (d.device_kind == INGOT_DEVICE_CPU && count != 1))
    return fmt::format("device_count is {} (a host backend serves 1 device, a device backend at least 1)", count);
  return {};
}

}  // namespace

BackendRegistry& BackendRegistry::instance() {
  static auto* registry = new BackendRegistry();  // never destroyed: plugins are never unloaded
  return *registry;
}

BackendRegistry::BackendRegistry() { add(reference::backend_table(), "builtin"); }

Backend& BackendRegistry::add(const ingot_backend* table, const std::string& plugin) {
  const std::string problem = table_problem(table);
  INGOT_CHECK_AS(problem.empty(), PluginError, "plugin {}: {}", plugin, problem);
  backends_.push_back(std::make_unique<Backend>(table, plugin));
  rebuild();
  return *backends_.back();
}

Backend* BackendRegistry::find(const std::string& name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

const std::vector<const Backend*>& BackendRegistry::candidates(DeviceKind kind) const {
  return by_kind_[static_cast<int>(kind)];
}

void BackendRegistry::restrict_to(const std::vector<std::string>& names) {
  for (auto& b : backends_) {
    const bool named = std::find(names.begin(), names.end(), b->name()) != names.end();
    b->set_enabled(names.empty() || named || b.get() == backends_.front().get());
  }
  rebuild();
}

void BackendRegistry::rebuild() {
  for (auto& list : by_kind_) list.clear();
  for (const auto& b : backends_)
    if (b->enabled()) by_kind_[static_cast<int>(b->device_kind())].push_back(b.get());
  for (auto& list : by_kind_)
    std::stable_sort(list.begin(), list.end(),
                     [](const Backend* a, const Backend* b) { return a->priority() > b->priority(); });
}

const Backend& BackendRegistry::device_backend(Device device) const {
  INGOT_CHECK(!device.is_cpu(), "device_backend: the CPU's memory belongs to core, not to a backend");
  for (const Backend* b : candidates(device.kind)) {
    if (!b->has_device_memory()) continue;
    b->check_device(device.index);
    return *b;
  }
  throw BackendMissingError(
      fmt::format("{}: no backend provides this device (see `ingot plugins --verbose` for why)", device.str()));
}

Allocator& BackendRegistry::allocator(Device device) {
  if (device.is_cpu()) {
    static auto* host = new GuardedAllocator(Device::cpu(), host_allocator());  // lives as long as the host's
    return *host;
  }
  const Backend& b = device_backend(device);
  std::lock_guard<std::mutex> lock(allocators_mu_);
  auto& slot = device_allocators_[{static_cast<int32_t>(device.kind), device.index}];
  if (!slot) slot = std::make_unique<GuardedAllocator>(device, std::make_unique<BackendAllocator>(b, device.index));
  return *slot;
}

}  // namespace ingot
