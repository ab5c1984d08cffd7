// Caching host allocator: size classes, a free-block cache and statistics.
#include "ingot/base/allocator.h"

#include <cstdlib>
#include <new>

#include <fmt/format.h>

#include "ingot/base/error.h"

namespace ingot {
namespace {
constexpr size_t kAlignment = 64;
}

size_t CachingHostAllocator::round_size(size_t bytes) {
  if (bytes > kMaxRequest)
    throw OutOfMemoryError(
        fmt::format("host allocation of {} bytes is larger than any machine's memory (limit 256 "
                    "TiB): check the tensor's shape for an overflowed size",
                    bytes));
  if (bytes <= 4096) return std::max<size_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  // Above 4 KiB: eight classes per power of two bounds the waste to 12.5%.
  size_t pow2 = 4096;
  while (pow2 <= bytes / 2) pow2 *= 2;  // (pow2 * 2 could wrap to 0 and never pass `bytes`)
  const size_t step = pow2 / 8;
  return (bytes + step - 1) / step * step;
}

CachingHostAllocator::~CachingHostAllocator() { empty_cache(); }

void* CachingHostAllocator::allocate(size_t bytes) {
  const size_t size = round_size(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.allocations;
  void* ptr = nullptr;
  if (auto it = cache_.find(size); it != cache_.end()) {
    ptr = it->second;
    cache_.erase(it);
    ++stats_.cache_hits;
  } else {
    // No retry here: the caller (core's guarded allocator) empties the cache and tries again,
    // the same way for the host and for devices.
    if (limit_ > 0 && stats_.reserved + static_cast<int64_t>(size) > limit_)
      throw OutOfMemoryError(
          fmt::format("host allocation of {} bytes would pass the host allocator's limit of {} "
                      "bytes ({} reserved)",
                      size, limit_, stats_.reserved));
    ptr = std::aligned_alloc(kAlignment, size);
    if (ptr == nullptr)
      throw OutOfMemoryError(fmt::format("host allocation of {} bytes failed: the system has no more memory", size));
    stats_.reserved += static_cast<int64_t>(size);
  }
  stats_.allocated += static_cast<int64_t>(size);
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  return ptr;
}

void CachingHostAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t size = round_size(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.allocated -= static_cast<int64_t>(size);
  cache_.emplace(size, ptr);
}

MemoryStats CachingHostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingHostAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated = stats_.allocated;
}

void CachingHostAllocator::set_limit(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  limit_ = bytes > 0 ? bytes : 0;
}

int64_t CachingHostAllocator::limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_;
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, ptr] : cache_) {
    std::free(ptr);
    stats_.reserved -= static_cast<int64_t>(size);
  }
  cache_.clear();
}

CachingHostAllocator& host_allocator() {
  // Never destroyed: tensors held in static objects may be released after main returns.
  static auto* allocator = new CachingHostAllocator();
  return *allocator;
}

}  // namespace ingot
