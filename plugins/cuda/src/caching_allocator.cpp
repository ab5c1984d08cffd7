// Size-class block cache per stream: round, look for a cached block of the stream and class (at
// most a quarter larger), else malloc; on failure wait for the device, empty the cache, retry
// once, then explain. Blocks used on other streams wait in `pending_` for their events.
#include "caching_allocator.h"

#include <algorithm>
#include <cstdint>
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

class CudaDeviceOps final : public RawDeviceOps {
 public:
  explicit CudaDeviceOps(int device) : device_(device) {}

  void* malloc(size_t bytes) override {
    INGOT_CUDA_CHECK(cudaSetDevice(device_));
    void* ptr = nullptr;
    const cudaError_t e = cudaMalloc(&ptr, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    INGOT_CUDA_CHECK(e);
    return ptr;
  }
  void free(void* ptr) override { INGOT_CUDA_CHECK(cudaFree(ptr)); }
  void synchronize() override {
    INGOT_CUDA_CHECK(cudaSetDevice(device_));
    INGOT_CUDA_CHECK(cudaDeviceSynchronize());
  }
  cudaEvent_t event_create() override {
    INGOT_CUDA_CHECK(cudaSetDevice(device_));
    cudaEvent_t e = nullptr;
    INGOT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void event_record(cudaEvent_t event, cudaStream_t stream) override {
    INGOT_CUDA_CHECK(cudaEventRecord(event, stream));
  }
  bool event_done(cudaEvent_t event) override {
    const cudaError_t e = cudaEventQuery(event);
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();  // "not ready" is an answer, not an error to blame later calls for
      return false;
    }
    INGOT_CUDA_CHECK(e);
    return true;
  }
  void event_destroy(cudaEvent_t event) noexcept override {
    (void)cudaEventDestroy(event);
    (void)cudaGetLastError();
  }
  void memory_info(size_t& free_bytes, size_t& total_bytes) noexcept override {
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      free_bytes = total_bytes = 0;
    }
  }

 private:
  int device_;
};

}  // namespace

std::unique_ptr<RawDeviceOps> make_cuda_device_ops(int device) { return std::make_unique<CudaDeviceOps>(device); }

CachingAllocator::CachingAllocator(int device, cudaStream_t stream, std::unique_ptr<RawDeviceOps> ops)
    : device_(device), stream_(stream), ops_(ops != nullptr ? std::move(ops) : make_cuda_device_ops(device)) {}

CachingAllocator::~CachingAllocator() {
  // Process exit: the driver may already be shutting down, so errors are ignored here.
  std::lock_guard<std::mutex> lock(mu_);
  try {
    for (auto& [stream, blocks] : cached_)
      for (auto& [size, ptr] : blocks) ops_->free(ptr);
    for (Pending& p : pending_) {
      for (cudaEvent_t e : p.events) ops_->event_destroy(e);
      ops_->free(p.ptr);
    }
  } catch (...) {
  }
  for (cudaEvent_t e : spare_events_) ops_->event_destroy(e);
}

size_t CachingAllocator::round_size(size_t bytes) {
  constexpr size_t kSmallStep = 512, kLargeStep = size_t(2) << 20, kSmallLimit = size_t(1) << 20;
  if (bytes > kMaxRequest)
    throw sdk::Failure(INGOT_ERR_OUT_OF_MEMORY, "CUDA out of memory: a request for " + std::to_string(bytes) +
                                                    " bytes is larger than any device (limit 256 TiB); check the "
                                                    "tensor's shape for an overflowed size");
  if (bytes == 0) return kSmallStep;  // a zero-byte tensor still gets a unique pointer
  if (bytes < kSmallLimit) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
}

void* CachingAllocator::allocate(size_t bytes, cudaStream_t stream, BlockUse use) {
  const size_t rounded = round_size(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  process_pending();
  const bool user = use == BlockUse::User;
  (user ? stats_.allocations : stats_.internal_allocations)++;
  size_t size = 0;
  void* ptr = take_cached(rounded, stream, size);
  if (ptr != nullptr) {
    if (user) stats_.cache_hits++;
  } else {
    ptr = device_malloc(rounded, bytes);
    size = rounded;
  }
  add_live(ptr, size, stream, use);
  return ptr;
}

// Only the stream's own blocks: its earlier work is ordered before whatever it queues next.
void* CachingAllocator::take_cached(size_t rounded, cudaStream_t stream, size_t& size) {
  auto s = cached_.find(stream);
  if (s == cached_.end()) return nullptr;
  std::multimap<size_t, void*>& blocks = s->second;
  auto it = blocks.lower_bound(rounded);
  if (it == blocks.end() || it->first > rounded + rounded / 4) return nullptr;  // no splitting: bound the waste
  void* ptr = it->second;
  size = it->first;
  blocks.erase(it);
  if (blocks.empty()) cached_.erase(s);
  return ptr;
}

void* CachingAllocator::device_malloc(size_t rounded, size_t requested) {
  void* ptr = ops_->malloc(rounded);
  if (ptr == nullptr && (!cached_.empty() || !pending_.empty())) {
    stats_.oom_retries++;
    free_cached();
    ptr = ops_->malloc(rounded);
  }
  if (ptr == nullptr) {
    size_t free_b = 0, total_b = 0;
    ops_->memory_info(free_b, total_b);
    throw sdk::Failure(INGOT_ERR_OUT_OF_MEMORY,
                       "CUDA out of memory on device " + std::to_string(device_) + ": tried to allocate " +
                           gib(static_cast<int64_t>(requested)) + "; Ingot has " + gib(stats_.allocated) +
                           " allocated to tensors, " + gib(stats_.internal_allocated) + " in workspaces and " +
                           gib(stats_.reserved) + " reserved; the device has " + gib(static_cast<int64_t>(free_b)) +
                           " free of " + gib(static_cast<int64_t>(total_b)) +
                           ". Try a smaller batch size, mixed precision (amp) or gradient checkpointing.");
  }
  stats_.device_mallocs++;
  stats_.reserved += static_cast<int64_t>(rounded);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  return ptr;
}

void CachingAllocator::add_live(void* ptr, size_t size, cudaStream_t stream, BlockUse use) {
  live_.emplace(ptr, Block{size, stream, use, {}});
  if (use == BlockUse::User) {
    stats_.allocated += static_cast<int64_t>(size);
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  } else {
    stats_.internal_allocated += static_cast<int64_t>(size);
    stats_.peak_internal_allocated = std::max(stats_.peak_internal_allocated, stats_.internal_allocated);
  }
}

void CachingAllocator::release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // not ours: whoever allocates frees, so this is a caller bug we must not crash on
  Block block = std::move(it->second);
  live_.erase(it);
  (block.use == BlockUse::User ? stats_.allocated : stats_.internal_allocated) -= static_cast<int64_t>(block.size);
  if (block.used_on.empty()) {
    cached_[block.stream].emplace(block.size, ptr);
    return;
  }
  pending_.push_back(Pending{ptr, block.size, block.stream, {}, false});
  Pending& p = pending_.back();
  p.events.reserve(block.used_on.size());
  try {
    for (cudaStream_t s : block.used_on) {
      p.events.push_back(take_event());
      ops_->event_record(p.events.back(), s);
    }
  } catch (...) {
    // What the other streams still do is unknown: only a device synchronize (empty_cache, an
    // out-of-memory retry) frees the block for reuse. A failed record is a device error that the
    // next checked CUDA call reports; release runs in destructors, so it never throws.
    p.needs_sync = true;
  }
}

bool CachingAllocator::record_stream(void* ptr, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(ptr);
  if (it == live_.begin()) return false;
  --it;
  if (reinterpret_cast<uintptr_t>(ptr) >= reinterpret_cast<uintptr_t>(it->first) + it->second.size) return false;
  Block& block = it->second;
  if (stream != block.stream && std::find(block.used_on.begin(), block.used_on.end(), stream) == block.used_on.end())
    block.used_on.push_back(stream);
  return true;
}

// Queries only: the allocating thread never waits for the device here.
void CachingAllocator::process_pending() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    std::vector<cudaEvent_t>& events = it->events;
    if (!it->needs_sync) {
      while (!events.empty() && ops_->event_done(events.back())) {
        spare_events_.push_back(events.back());
        events.pop_back();
      }
    }
    if (!it->needs_sync && events.empty()) {
      cached_[it->stream].emplace(it->size, it->ptr);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

void CachingAllocator::free_cached() {
  if (cached_.empty() && pending_.empty()) return;
  // Work still queued on any stream may use a cached block; afterwards every pending event is done.
  ops_->synchronize();
  for (Pending& p : pending_) {
    spare_events_.insert(spare_events_.end(), p.events.begin(), p.events.end());
    cached_[p.stream].emplace(p.size, p.ptr);
  }
  pending_.clear();
  while (!cached_.empty()) {
    auto s = cached_.begin();
    auto it = s->second.begin();
    void* ptr = it->second;
    stats_.reserved -= static_cast<int64_t>(it->first);
    s->second.erase(it);
    if (s->second.empty()) cached_.erase(s);
    ops_->free(ptr);  // erased first: a free that throws must not leave a freed pointer to hand out again
  }
}

cudaEvent_t CachingAllocator::take_event() {
  if (spare_events_.empty()) return ops_->event_create();
  cudaEvent_t e = spare_events_.back();
  spare_events_.pop_back();
  return e;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  free_cached();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  AllocatorStats s = stats_;
  s.pending_blocks = static_cast<int64_t>(pending_.size());
  return s;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
  stats_.peak_internal_allocated = stats_.internal_allocated;
}

}  // namespace ingot::cuda
