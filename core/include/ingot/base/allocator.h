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
  /// Returns at least `bytes` (may be 0) suitably aligned; throws OutOfMemoryError. The caller
  /// decides whether to empty the cache and retry (core's guarded allocator does, once).
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak() = 0;
  /// Returns cached, unused blocks to the system.
  virtual void empty_cache() = 0;
  /// The bytes a request of `bytes` adds to `allocated` (a size class where the allocator rounds).
  virtual size_t block_size(size_t bytes) const { return bytes; }
};

/// Host allocator: 64-byte aligned blocks rounded up to size classes, freed blocks kept in a
/// per-size cache so a steady-state training step does not call the system allocator.
class CachingHostAllocator final : public Allocator {
 public:
  CachingHostAllocator() = default;
  ~CachingHostAllocator() override;
  /// Serves a cached block of the size class, else a new one; throws OutOfMemoryError when the
  /// system has none or `reserved` would pass the limit (the cache is not emptied here).
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  MemoryStats stats() const override;
  void reset_peak() override;
  void empty_cache() override;
  size_t block_size(size_t bytes) const override { return round_size(bytes); }

  /// Caps `reserved` at `bytes` (0 = no cap), as torch.cuda.set_per_process_memory_fraction caps
  /// a GPU: an allocation that would pass it fails like an exhausted system.
  void set_limit(int64_t bytes);
  int64_t limit() const;

  /// Size class of a request: 64-byte multiples up to 4 KiB, then 1/8 of a power of two.
  /// OutOfMemoryError for a request above kMaxRequest (a size that overflowed, say), before any
  /// arithmetic could wrap around.
  static size_t round_size(size_t bytes);
  /// Far above any machine's memory and far below SIZE_MAX (2^48 bytes, 256 TiB).
  static constexpr size_t kMaxRequest = size_t{1} << 48;

 private:
  mutable std::mutex mu_;
  std::multimap<size_t, void*> cache_;
  MemoryStats stats_;
  int64_t limit_ = 0;
};

/// The process's host allocator.
CachingHostAllocator& host_allocator();

}  // namespace ingot
