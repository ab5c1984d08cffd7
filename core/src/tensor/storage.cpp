// Storage: memory from an allocator, returned to it (an opaque layout's handle is released by
// runtime/tensor_memory.cpp, which knows backends).
#include "ingot/tensor/storage.h"

#include "ingot/base/allocator.h"

namespace ingot {

Storage::Storage(size_t nbytes, Device device, Allocator& allocator)
    : data_(allocator.allocate(nbytes)), nbytes_(nbytes), device_(device), allocator_(&allocator) {}

Storage::~Storage() { allocator_->deallocate(data_, nbytes_); }

}  // namespace ingot
