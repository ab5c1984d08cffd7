// Tensor: the handle and its metadata (element access, contiguity, views of the same storage).
// The methods that run ops live with the layers that run them: runtime/tensor_memory.cpp
// (allocation, reorder of an opaque layout) and autograd/tensor_methods.cpp (views that record
// autograd, copies, casts, device moves).
#include "ingot/tensor/tensor.h"

#include "ingot/base/error.h"
#include "tensor/element.h"

namespace ingot {

TensorImpl& Tensor::impl() const {
  INGOT_CHECK(impl_ != nullptr, "use of an undefined tensor");
  return *impl_;
}

Tensor Tensor::scalar(double value, DType dtype) {
  Tensor t = empty(Shape{}, dtype);
  store_element(dtype, t.raw_host_data(), value);
  return t;
}

int64_t Tensor::size(int64_t d) const { return shape()[wrap_axis(d, dim(), "Tensor::size")]; }

bool Tensor::is_contiguous() const {
  if (is_opaque()) return false;
  int64_t expected = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (shape()[i] != 1 && strides()[i] != expected) return false;
    expected *= shape()[i];
  }
  return true;
}

void* Tensor::raw_host_data() const {
  INGOT_CHECK(device().is_cpu(), "host access to a tensor on {}: call .to(Device::cpu()) first", device().str());
  if (is_opaque()) strided();
  INGOT_CHECK(storage()->data() != nullptr || numel() == 0,
              "host access to a tensor without data (a shape-only stand-in of a tensor that the autograd graph did "
              "not keep; its shape {} and dtype {} are all it has)",
              shape().str(), dtype_name(dtype()));
  return storage()->data();
}

Tensor Tensor::make_view(const Shape& shape, const Shape& strides, int64_t offset) const {
  const Tensor base = strided();
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->dtype = base.dtype();
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  return Tensor(std::move(impl));
}

}  // namespace ingot
