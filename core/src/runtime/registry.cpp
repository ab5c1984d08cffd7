// BackendRegistry: the reference backend plus every plugin backend, ordered for selection.
#include "ingot/runtime/registry.h"

#include <algorithm>
#include <cstddef>

#include "backends/reference/reference_backend.h"
#include "ingot/runtime/allocator.h"
#include "ingot/runtime/error.h"

namespace ingot {
namespace {

/// Device memory straight from a backend (device backends cache internally).
class BackendAllocator final : public Allocator {
 public:
  explicit BackendAllocator(const Backend& b) : backend_(b) {}
  void* allocate(size_t bytes) override {
    void* p = backend_.alloc(bytes);
    stats_.allocations++;
    stats_.allocated += static_cast<int64_t>(bytes);
    stats_.reserved = std::max(stats_.reserved, stats_.allocated);
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    backend_.free(ptr);
    stats_.allocated -= static_cast<int64_t>(bytes);
  }
  MemoryStats stats() const override { return stats_; }
  void reset_peak() override { stats_.peak_allocated = stats_.allocated; }
  void empty_cache() override {}

 private:
  const Backend& backend_;
  MemoryStats stats_;
};

}  // namespace

BackendRegistry& BackendRegistry::instance() {
  static auto* registry = new BackendRegistry();  // never destroyed: plugins are never unloaded
  return *registry;
}

BackendRegistry::BackendRegistry() { add(reference::backend_table(), "builtin"); }

Backend& BackendRegistry::add(const ingot_backend* table, const std::string& plugin) {
  // Tables of older minors are shorter (entries are appended): require the ABI 1.0 part only.
  constexpr size_t kMinTableSize = offsetof(ingot_backend, destroy) + sizeof(ingot_backend::destroy);
  INGOT_CHECK_AS(table != nullptr && table->struct_size >= kMinTableSize && table->supports != nullptr &&
                     table->execute != nullptr,
                 PluginError, "plugin {}: backend table is incomplete (struct_size {})", plugin,
                 table != nullptr ? table->struct_size : 0);
  INGOT_CHECK_AS(table->device_kind == INGOT_DEVICE_CPU || table->device_kind == INGOT_DEVICE_CUDA, PluginError,
                 "plugin {}: unknown device kind {}", plugin, table->device_kind);
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

Allocator& BackendRegistry::allocator(Device device) {
  if (device.is_cpu()) return host_allocator();
  auto& slot = device_allocators_[static_cast<int>(device.kind)];
  if (slot) return *slot;
  for (const auto& b : candidates(device.kind))
    if (b->table()->alloc != nullptr) {
      slot = std::make_unique<BackendAllocator>(*b);
      return *slot;
    }
  throw BackendMissingError(fmt::format("no backend provides memory on {}", device.str()));
}

}  // namespace ingot
