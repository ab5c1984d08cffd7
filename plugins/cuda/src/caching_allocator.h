// CachingAllocator: a size-class cache of device blocks for one GPU, safe across streams. A block
// belongs to the stream it was allocated for and goes back to that stream's cache on release; a
// block also used on other streams (record_stream) is reused only once events recorded on them
// have completed. The raw device calls are injected (CUDA by default) so the bookkeeping is
// testable without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

#include "device_memory.h"

namespace ingot::cuda {

/// Byte counters in the spirit of torch.cuda.memory_stats. "User" blocks back tensors (the device
/// table's alloc); "internal" blocks are the backend's own scratch and library workspaces.
struct AllocatorStats {
  int64_t allocated = 0;  ///< bytes in user blocks handed out (rounded sizes)
  int64_t reserved = 0;   ///< everything cudaMalloc holds: user + internal blocks, cached or not
  int64_t peak_allocated = 0;
  int64_t peak_reserved = 0;
  int64_t allocations = 0;         ///< user allocate() calls
  int64_t cache_hits = 0;          ///< user allocate() calls served from the cache
  int64_t internal_allocated = 0;  ///< bytes in internal blocks handed out
  int64_t peak_internal_allocated = 0;
  int64_t internal_allocations = 0;  ///< internal allocate() calls
  int64_t device_mallocs = 0;        ///< cudaMalloc calls
  int64_t oom_retries = 0;           ///< times the cache was emptied to retry a failed cudaMalloc
  int64_t pending_blocks = 0;        ///< released blocks still waiting for work on other streams
};

/// The raw device operations the allocator is built on: CUDA's (make_cuda_device_ops) or a fake.
class RawDeviceOps {
 public:
  virtual ~RawDeviceOps() = default;
  /// A block of exactly `bytes`, or nullptr when the device is out of memory; throws on other errors.
  virtual void* malloc(size_t bytes) = 0;
  virtual void free(void* ptr) = 0;
  /// Waits for all work queued on the device, on every stream.
  virtual void synchronize() = 0;
  virtual cudaEvent_t event_create() = 0;
  virtual void event_record(cudaEvent_t event, cudaStream_t stream) = 0;
  /// True once the work recorded before `event` has completed; never blocks.
  virtual bool event_done(cudaEvent_t event) = 0;
  virtual void event_destroy(cudaEvent_t event) noexcept = 0;
  /// The device's free and total bytes for the out-of-memory message (0, 0 when unknown).
  virtual void memory_info(size_t& free_bytes, size_t& total_bytes) noexcept = 0;
};

/// cudaMalloc / cudaFree / cudaEvent* on `device` (made current before each malloc and event).
std::unique_ptr<RawDeviceOps> make_cuda_device_ops(int device);

/// Who a block serves: it decides which counters of AllocatorStats it shows up in.
enum class BlockUse { User, Internal };

class CachingAllocator final : public DeviceMemory {
 public:
  /// `stream` is the compute stream user blocks are allocated for; `ops` defaults to CUDA's.
  CachingAllocator(int device, cudaStream_t stream, std::unique_ptr<RawDeviceOps> ops = nullptr);
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// A user block for the compute stream (the device table's alloc).
  void* allocate(size_t bytes) override { return allocate(bytes, stream_, BlockUse::User); }
  /// A block for work queued on `stream`: reused at once by later work on that stream.
  void* allocate(size_t bytes, cudaStream_t stream, BlockUse use);
  /// Returns a block to its stream's cache, or, when it was also used on other streams, records
  /// an event on each of them and caches it once they all completed. Never throws.
  void release(void* ptr) override;
  /// Marks the live block that holds `ptr` as used by work queued on `stream` (torch's
  /// Tensor.record_stream); its release then waits for that work. False, and nothing recorded,
  /// when `ptr` is in no live block of this allocator (another device's memory, a foreign buffer).
  bool record_stream(void* ptr, cudaStream_t stream);
  /// Waits for the device, then returns every cached block (and every released block that was
  /// waiting for other streams) to the device; live blocks are untouched.
  void empty_cache();
  AllocatorStats stats() const;
  void reset_peak();
  /// The size class a request is rounded to: 512 B steps below 1 MiB, 2 MiB steps above. Throws
  /// an out-of-memory Failure for a request above kMaxRequest instead of wrapping around.
  static size_t round_size(size_t bytes);
  /// Far above any device's memory and far below SIZE_MAX, so rounding and the counters never overflow.
  static constexpr size_t kMaxRequest = size_t(1) << 48;

 private:
  struct Block {
    size_t size;
    cudaStream_t stream;
    BlockUse use;
    std::vector<cudaStream_t> used_on;  // other streams, from record_stream
  };
  struct Pending {
    void* ptr;
    size_t size;
    cudaStream_t stream;
    std::vector<cudaEvent_t> events;  // one per stream the block was used on
    bool needs_sync;                  // recording failed: reusable only after a device synchronize
  };

  void* take_cached(size_t rounded, cudaStream_t stream, size_t& size);
  void* device_malloc(size_t rounded, size_t requested);
  void add_live(void* ptr, size_t size, cudaStream_t stream, BlockUse use);
  void process_pending();
  void free_cached();
  cudaEvent_t take_event();

  int device_;
  cudaStream_t stream_;
  std::unique_ptr<RawDeviceOps> ops_;
  mutable std::mutex mu_;
  std::map<void*, Block> live_;  // ordered: record_stream finds the block holding an interior pointer
  std::map<cudaStream_t, std::multimap<size_t, void*>> cached_;  // free blocks by stream, then size
  std::vector<Pending> pending_;
  std::vector<cudaEvent_t> spare_events_;
  AllocatorStats stats_;
};

/// Internal blocks (scratch, library workspaces) for work queued on one stream: what kernels and
/// engines take their memory from, so it stays out of the user counters and is stream-ordered.
class StreamMemory final : public DeviceMemory {
 public:
  StreamMemory(CachingAllocator& allocator, cudaStream_t stream) : allocator_(allocator), stream_(stream) {}
  void* allocate(size_t bytes) override { return allocator_.allocate(bytes, stream_, BlockUse::Internal); }
  void release(void* ptr) override { allocator_.release(ptr); }

 private:
  CachingAllocator& allocator_;
  cudaStream_t stream_;
};

}  // namespace ingot::cuda
