// Size-class block cache over cudaMalloc: round, look for a cached block of the class (at most a
// quarter larger), else cudaMalloc; on failure empty the cache, retry once, then explain.
#include "caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "cuda_check.h"

namespace ingot::cuda {
namespace {

std::string gib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f GiB (%lld bytes)", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0),
                static_cast<long long>(bytes));
  return buf;
}

}  // namespace

CachingAllocator::~CachingAllocator() {
  // Process exit: the driver may already be shutting down, so errors are ignored here.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, ptr] : cached_) (void)cudaFree(ptr);
  cached_.clear();
}

size_t CachingAllocator::round_size(size_t bytes) {
  constexpr size_t kSmallStep = 512, kLargeStep = size_t(2) << 20, kSmallLimit = size_t(1) << 20;
  if (bytes == 0) return kSmallStep;  // a zero-byte tensor still gets a unique pointer
  if (bytes < kSmallLimit) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t rounded = round_size(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.allocations++;
  void* ptr = take_cached(rounded);
  if (ptr != nullptr) {
    stats_.cache_hits++;
  } else {
    ptr = device_malloc(rounded, bytes);
  }
  stats_.allocated += static_cast<int64_t>(live_[ptr]);
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  return ptr;
}

void* CachingAllocator::take_cached(size_t rounded) {
  auto it = cached_.lower_bound(rounded);
  if (it == cached_.end() || it->first > rounded + rounded / 4) return nullptr;  // no splitting: bound the waste
  void* ptr = it->second;
  live_[ptr] = it->first;
  cached_.erase(it);
  return ptr;
}

void* CachingAllocator::device_malloc(size_t rounded, size_t requested) {
  INGOT_CUDA_CHECK(cudaSetDevice(device_));
  void* ptr = nullptr;
  cudaError_t e = cudaMalloc(&ptr, rounded);
  if (e == cudaErrorMemoryAllocation && !cached_.empty()) {
    (void)cudaGetLastError();
    stats_.oom_retries++;
    free_cached_locked();
    e = cudaMalloc(&ptr, rounded);
  }
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw sdk::Failure(INGOT_ERR_OUT_OF_MEMORY,
                       "CUDA out of memory on device " + std::to_string(device_) + ": tried to allocate " +
                           gib(static_cast<int64_t>(requested)) + "; Ingot has " + gib(stats_.allocated) +
                           " allocated and " + gib(stats_.reserved) + " reserved; the device has " +
                           gib(static_cast<int64_t>(free_b)) + " free of " + gib(static_cast<int64_t>(total_b)) +
                           ". Try a smaller batch size, mixed precision (amp) or gradient checkpointing.");
  }
  INGOT_CUDA_CHECK(e);
  stats_.device_mallocs++;
  stats_.reserved += static_cast<int64_t>(rounded);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  live_[ptr] = rounded;
  return ptr;
}

void CachingAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // not ours: whoever allocates frees, so this is a caller bug we must not crash on
  stats_.allocated -= static_cast<int64_t>(it->second);
  cached_.emplace(it->second, ptr);
  live_.erase(it);
}

void CachingAllocator::free_cached_locked() {
  if (cached_.empty()) return;
  // Kernels still queued may use a cached block until the stream drains.
  INGOT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (auto& [size, ptr] : cached_) {
    INGOT_CUDA_CHECK(cudaFree(ptr));
    stats_.reserved -= static_cast<int64_t>(size);
  }
  cached_.clear();
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  free_cached_locked();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

}  // namespace ingot::cuda
