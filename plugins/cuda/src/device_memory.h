// DeviceMemory: the allocator interface kernels and engines take their scratch from, and Scratch,
// a block held for one call (released to the cache when the call returns).
#pragma once

#include <cstddef>

namespace ingot::cuda {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  /// Device memory of at least `bytes` (never NULL; throws sdk::Failure on exhaustion).
  virtual void* allocate(size_t bytes) = 0;
  /// Never throws: Scratch releases in its destructor.
  virtual void release(void* ptr) = 0;
};

/// Scratch memory for one op: safe to release at scope end when `mem` allocates for the stream the
/// op's kernels run on (StreamMemory), because the cache hands the block only to later work on that
/// same stream, which is ordered after this op's kernels.
class Scratch {
 public:
  Scratch(DeviceMemory& mem, size_t bytes) : mem_(mem), ptr_(bytes > 0 ? mem.allocate(bytes) : nullptr) {}
  ~Scratch() {
    if (ptr_ != nullptr) mem_.release(ptr_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  DeviceMemory& mem_;
  void* ptr_;
};

}  // namespace ingot::cuda
