// GuardedAllocator: what BackendRegistry::allocator(device) hands out — a device's allocator with
// one retry after emptying its cache when memory runs out, an out-of-memory error that says what
// the device holds and has, and the memory tracker told about every block while it is on.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "ingot/base/allocator.h"
#include "ingot/tensor/device.h"

namespace ingot {

class GuardedAllocator final : public Allocator {
 public:
  /// Guards `inner` (not owned), the allocator of `device`.
  GuardedAllocator(Device device, Allocator& inner);
  /// Guards `inner`, owned.
  GuardedAllocator(Device device, std::unique_ptr<Allocator> inner);

  /// inner.allocate(bytes); on OutOfMemoryError empties the cache and tries once more; when that
  /// fails too, throws OutOfMemoryError with explain_out_of_memory's text.
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  MemoryStats stats() const override { return inner_.stats(); }
  void reset_peak() override { inner_.reset_peak(); }
  void empty_cache() override { inner_.empty_cache(); }
  size_t block_size(size_t bytes) const override { return inner_.block_size(bytes); }

  Device device() const { return device_; }
  Allocator& inner() const { return inner_; }

 private:
  Device device_;
  std::unique_ptr<Allocator> owned_;
  Allocator& inner_;
};

/// "cuda:0: out of memory: 12.3 MiB (12902400 bytes) requested, still failing after the cache was
/// emptied; allocated 10.1 GiB, reserved 10.4 GiB, peak 10.9 GiB; budget 11.0 GiB of 16.0 GiB
/// available (cudaMemGetInfo) (<why>): lower the batch size or hold fewer tensors". The counters are the device
/// allocator's own where its backend reports them, else `fallback`'s.
std::string explain_out_of_memory(Device device, size_t bytes, const MemoryStats& fallback, const std::string& why);

}  // namespace ingot
