// Storage: memory from an allocator, returned to it (an opaque layout's handle is released by
// runtime/tensor_memory.cpp, which knows backends).
#include "ingot/tensor/storage.h"

#include <atomic>

#include "ingot/base/allocator.h"

namespace ingot {

namespace {
std::atomic<uint64_t> g_serial{0};
}

Storage::Storage(size_t nbytes, Device device, Allocator& allocator)
    : data_(allocator.allocate(nbytes)),
      nbytes_(nbytes),
      device_(device),
      allocator_(&allocator),
      serial_(g_serial.fetch_add(1, std::memory_order_relaxed) + 1) {}

uint64_t Storage::last_serial() { return g_serial.load(std::memory_order_relaxed); }

Storage::~Storage() { allocator_->deallocate(data_, nbytes_); }

}  // namespace ingot
