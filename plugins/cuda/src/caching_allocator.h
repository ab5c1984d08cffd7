// CachingAllocator: size-class cache of cudaMalloc blocks for one device and its compute stream.
// Freed blocks go back to the cache (reuse is ordered by the single compute stream); on
// exhaustion the cache is emptied and the allocation retried once before a detailed OOM error.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include <cuda_runtime_api.h>

#include "device_memory.h"

namespace ingot::cuda {

/// Byte counters in the spirit of torch.cuda.memory_stats.
struct AllocatorStats {
  int64_t allocated = 0;       ///< bytes in blocks handed out (rounded sizes)
  int64_t reserved = 0;        ///< allocated + cached, i.e. what cudaMalloc holds
  int64_t peak_allocated = 0;
  int64_t peak_reserved = 0;
  int64_t allocations = 0;     ///< allocate() calls
  int64_t cache_hits = 0;      ///< allocate() calls served from the cache
  int64_t device_mallocs = 0;  ///< cudaMalloc calls
  int64_t oom_retries = 0;     ///< times the cache was emptied to retry a failed cudaMalloc
};

class CachingAllocator final : public DeviceMemory {
 public:
  CachingAllocator(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes) override;
  void release(void* ptr) override;
  /// Returns every cached (free) block to the device; live blocks are untouched.
  void empty_cache();
  AllocatorStats stats() const;
  void reset_peak();
  /// The size class a request is rounded to: 512 B steps below 1 MiB, 2 MiB steps above.
  static size_t round_size(size_t bytes);

 private:
  void* take_cached(size_t rounded);
  void* device_malloc(size_t rounded, size_t requested);
  void free_cached_locked();

  int device_;
  cudaStream_t stream_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> live_;  // handed-out block -> rounded size
  std::multimap<size_t, void*> cached_;     // free blocks by size
  AllocatorStats stats_;
};

}  // namespace ingot::cuda
