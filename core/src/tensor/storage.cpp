// Storage and opaque layouts: return memory and layout handles to their owners.
#include "ingot/tensor/storage.h"

#include "ingot/runtime/allocator.h"
#include "ingot/runtime/backend.h"

namespace ingot {

Storage::Storage(size_t nbytes, Device device, Allocator& allocator)
    : data_(allocator.allocate(nbytes)), nbytes_(nbytes), device_(device), allocator_(&allocator) {}

Storage::~Storage() { allocator_->deallocate(data_, nbytes_); }

OpaqueLayout::~OpaqueLayout() { owner_->layout_release(handle_); }

}  // namespace ingot
