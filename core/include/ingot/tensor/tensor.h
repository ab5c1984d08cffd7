// Tensor: a typed, shaped, strided view of shared storage on a device, or a backend-opaque layout.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/tensor/device.h"
#include "ingot/tensor/dtype.h"
#include "ingot/tensor/half.h"
#include "ingot/tensor/shape.h"
#include "ingot/tensor/storage.h"

namespace ingot {

namespace autograd {
class Node;
struct AutogradMeta;
}  // namespace autograd

/// Maps a C++ element type to its DType.
template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::I8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };

/// Shared state of a tensor and the handles that copy it.
struct TensorImpl {
  std::shared_ptr<Storage> storage;
  DType dtype = DType::F32;
  Shape shape;
  Shape strides;       ///< in elements; meaningless for an opaque layout
  int64_t offset = 0;  ///< in elements
  std::shared_ptr<OpaqueLayout> layout;  ///< null = strided
  std::shared_ptr<autograd::AutogradMeta> autograd;  ///< null = no grad, a leaf
};

/// A handle to a tensor; copies share data (like torch.Tensor). Views share storage.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  /// Uninitialised contiguous tensor.
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  /// Contiguous host tensor holding `values` (converted to `dtype` when given).
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  /// A 0-dim tensor.
  static Tensor scalar(double value, DType dtype = DType::F32);

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return impl().dtype; }
  const Shape& shape() const { return impl().shape; }
  const Shape& strides() const { return impl().strides; }
  int64_t offset() const { return impl().offset; }
  int dim() const { return impl().shape.size(); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return impl().shape.numel(); }
  Device device() const { return impl().storage->device(); }
  bool is_contiguous() const;
  bool is_opaque() const { return impl().layout != nullptr; }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  const std::shared_ptr<OpaqueLayout>& layout() const { return impl().layout; }
  TensorImpl& impl() const;
  bool same_tensor(const Tensor& o) const { return impl_ == o.impl_; }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  /// Handles sharing this tensor's impl (1 = this handle only).
  long use_count() const noexcept { return impl_.use_count(); }

  // ---- views (share storage; an opaque tensor is first reordered to strided) ----
  Tensor view(const Shape& shape) const;        ///< needs compatible strides
  Tensor reshape(const Shape& shape) const;     ///< view when possible, else a copy; -1 infers
  Tensor permute(const std::vector<int>& order) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor expand(const Shape& shape) const;      ///< broadcast view (stride 0)
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;

  // ---- copies ----
  Tensor contiguous() const;                    ///< self when already contiguous and strided
  Tensor strided() const;                       ///< self unless opaque; else a reorder
  Tensor clone() const;
  Tensor to(DType dtype) const;                 ///< self when equal
  Tensor to(Device device) const;               ///< self when equal
  /// Copies `src` (broadcast to this shape, cast to this dtype) into this tensor's memory.
  void copy_(const Tensor& src) const;
  void fill_(double value) const;

  // ---- host access ----
  /// Pointer to the first element of a strided host tensor of dtype T.
  template <class T>
  T* data() const;
  /// Values in row-major order, cast to T's dtype first when needed.
  template <class T>
  std::vector<T> to_vector() const;
  /// Value of a one-element tensor as double.
  double item() const;

  // ---- autograd (core/src/autograd/tensor_autograd.cpp; torch's semantics) ----
  bool requires_grad() const;
  /// Marks a leaf as a parameter to differentiate; an error on a non-leaf. Returns *this.
  const Tensor& set_requires_grad(bool on = true) const;
  /// The accumulated gradient (undefined until a backward pass reaches this tensor).
  Tensor grad() const;
  /// Replaces the gradient; an undefined tensor clears it (optimizer.zero_grad).
  void set_grad(const Tensor& g) const;
  /// True for tensors not produced by a recorded op (parameters, inputs).
  bool is_leaf() const;
  /// The node that produced this tensor; null for a leaf.
  std::shared_ptr<autograd::Node> grad_fn() const;
  /// Keeps .grad on a non-leaf after backward.
  void retain_grad() const;
  /// Backpropagates from this tensor; `gradient` may be omitted for a one-element tensor.
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false) const;
  /// Same data, no graph, requires_grad false.
  Tensor detach() const;

  std::string str() const;
  friend std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

 private:
  std::shared_ptr<TensorImpl> impl_;
  void* raw_host_data() const;
  Tensor make_view(const Shape& shape, const Shape& strides, int64_t offset) const;
};

template <class T>
T* Tensor::data() const {
  INGOT_CHECK_AS(dtype() == DTypeOf<T>::value, DTypeError, "Tensor::data: tensor is {}, asked for {}",
                 dtype_name(dtype()), dtype_name(DTypeOf<T>::value));
  return static_cast<T*>(raw_host_data()) + offset();
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  INGOT_CHECK_SHAPE(static_cast<int64_t>(values.size()) == shape.numel(),
                    "Tensor::from_vector: {} values for shape {}", values.size(), shape.str());
  Tensor t = empty(shape, DTypeOf<T>::value);
  T* p = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  const Tensor c = to(DTypeOf<T>::value).to(Device::cpu()).contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

}  // namespace ingot
