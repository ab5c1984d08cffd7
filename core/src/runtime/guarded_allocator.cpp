// GuardedAllocator: the retry after emptying the cache, the explained out-of-memory error, and
// the memory tracker's notifications (checked with one atomic load when it is off).
#include "ingot/runtime/guarded_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "ingot/base/error.h"
#include "ingot/runtime/device_memory.h"
#include "ingot/runtime/memory_tracker.h"

namespace ingot {

GuardedAllocator::GuardedAllocator(Device device, Allocator& inner) : device_(device), inner_(inner) {}

GuardedAllocator::GuardedAllocator(Device device, std::unique_ptr<Allocator> inner)
    : device_(device), owned_(std::move(inner)), inner_(*owned_) {}

void* GuardedAllocator::allocate(size_t bytes) {
  void* ptr = nullptr;
  try {
    ptr = inner_.allocate(bytes);
  } catch (const OutOfMemoryError&) {
    // Cached blocks of other size classes may be what is missing: give them back and retry once,
    // as PyTorch's caching allocator does before it raises.
    inner_.empty_cache();
    try {
      ptr = inner_.allocate(bytes);
    } catch (const OutOfMemoryError& again) {
      throw OutOfMemoryError(explain_out_of_memory(device_, bytes, inner_.stats(), again.what()));
    }
  }
  if (MemoryTracker::enabled())
    MemoryTracker::instance().on_alloc(device_, ptr, static_cast<int64_t>(inner_.block_size(bytes)));
  return ptr;
}

void GuardedAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr != nullptr && MemoryTracker::enabled()) MemoryTracker::instance().on_free(ptr);
  inner_.deallocate(ptr, bytes);
}

std::string explain_out_of_memory(Device device, size_t bytes, const MemoryStats& fallback, const std::string& why) {
  MemoryStats s = fallback;
  std::string budget = "budget unknown";
  try {  // an explanation must not fail in its turn: what cannot be read is left out
    if (!device.is_cpu() && memory_stats_available(device)) s = memory_stats(device);
    const MemoryBudget b = memory_budget(device);
    if (b.available > 0 || b.total > 0)
      budget = fmt::format("budget {} available of {} ({})", format_memory_bytes(b.available),
                           format_memory_bytes(b.total), b.bound_by);
  } catch (const Error&) {
  }
  return fmt::format(
      "{}: out of memory: {} ({} bytes) requested, still failing after the cache was emptied; allocated {}, "
      "reserved {}, peak {}; {} ({}): lower the batch size or hold fewer tensors",
      device.str(), format_memory_bytes(static_cast<int64_t>(std::min<size_t>(bytes, INT64_MAX))), bytes,
      format_memory_bytes(s.allocated), format_memory_bytes(s.reserved), format_memory_bytes(s.peak_allocated), budget,
      why);
}

}  // namespace ingot
