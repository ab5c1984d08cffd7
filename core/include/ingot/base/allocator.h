// Memory allocators behind tensor storage, with PyTorch-style statistics and a cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace ingot {

/// Counters every allocator reports (bytes unless noted).
struct MemoryStats {
  int64_t allocated = 0;        ///< bytes held by live tensors
  int64_t reserved = 0;         ///< allocated + cached, i.e. what the allocator holds
  int64_t peak_allocated = 0;   ///< high-water mark of `allocated` since the last reset
  int64_t allocations = 0;      ///< number of allocate() calls
  int64_t cache_hits = 0;       ///< allocate() calls served from the cache
};

/// Interface of a device's allocator. Whoever allocates frees: memory goes back to the
/// allocator that produced it.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns at least `bytes` (may be 0) suitably aligned; throws OutOfMemoryError.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak() = 0;
  /// Returns cached, unused blocks to the system.
  virtual void empty_cache() = 0;
};

/// Host allocator: 64-byte aligned blocks rounded up to size classes, freed blocks kept in a
/// per-size cache so a steady-state training step does not call the system allocator.
class CachingHostAllocator final : public Allocator {
 public:
  CachingHostAllocator() = default;
  ~CachingHostAllocator() override;
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  MemoryStats stats() const override;
  void reset_peak() override;
  void empty_cache() override;

  /// Size class of a request: 64-byte multiples up to 4 KiB, then 1/8 of a power of two.
  static size_t round_size(size_t bytes);

 private:
  mutable std::mutex mu_;
  std::multimap<size_t, void*> cache_;
  MemoryStats stats_;
};

/// The process's host allocator.
CachingHostAllocator& host_allocator();

}  // namespace ingot
