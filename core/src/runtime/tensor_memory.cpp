// The Tensor methods that need the runtime: allocation on a device through the registry, the
// reorder of a backend's opaque layout back to strided, and the release of that layout.
#include <optional>

#include "ingot/base/error.h"
#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/memory_tracker.h"
#include "ingot/runtime/op_recorder.h"
#include "ingot/runtime/registry.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t d : shape) INGOT_CHECK_SHAPE(d >= 0, "negative dimension in shape {}", shape.str());
  auto impl = std::make_shared<TensorImpl>();
  const size_t nbytes = static_cast<size_t>(storage_bytes(shape, dtype_size(dtype)));
  std::optional<AllocationLabel> label;  // (inside an op: that op's, with this shape)
  if (MemoryTracker::enabled()) label.emplace(nullptr, "tensor", &shape, dtype);
  impl->storage = std::make_shared<Storage>(nbytes, device, BackendRegistry::instance().allocator(device));
  impl->dtype = dtype;
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  return Tensor(std::move(impl));
}

Tensor Tensor::strided() const {
  TensorImpl& im = impl();
  if (im.layout == nullptr) return *this;
  // Reorder in place: every handle of this tensor sees the strided copy from now on.
  const Backend* owner = im.layout->owner();
  Tensor dst = empty(im.shape, im.dtype, device());
  const ingot_tensor_desc src = make_desc(*this);
  owner->to_strided(src, make_desc(dst), exec_context());
  if (OpRecorder* r = op_recorder()) r->record_reorder(*owner, im.storage, im.layout, src, dst);
  im.storage = dst.storage();
  im.strides = dst.strides();
  im.offset = 0;
  im.layout.reset();
  return *this;
}

OpaqueLayout::~OpaqueLayout() { owner_->layout_release(handle_); }

}  // namespace ingot
