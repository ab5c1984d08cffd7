// Row-major walk over an N-d index space that tracks the element offset of several strided
// operands at once; an operand may be broadcast to the walk's shape (stride 0 on expanded dims).
#pragma once

#include <cstdint>

#include "ingot/plugin/sdk.h"

namespace ingot::reference {

class NdIter {
 public:
  static constexpr int kMaxOperands = 8;

  /// Walks `shape` (ndim 0 is one element; any zero dim is no element).
  NdIter(int ndim, const int64_t* shape);
  /// Walks the shape of `d`.
  explicit NdIter(const ingot_tensor_desc& d) : NdIter(d.ndim, d.shape) {}

  /// Adds an operand with strides aligned to the walk's dims; returns its slot.
  int add(const int64_t* strides);
  /// Adds `d` broadcast to the walk's shape (NumPy rules, aligned right); throws when it does
  /// not broadcast. `op` names the op in the message.
  int add_broadcast(const ingot_tensor_desc& d, int32_t op);

  int ndim() const { return ndim_; }
  int64_t numel() const { return numel_; }
  bool done() const { return remaining_ <= 0; }
  /// Advances to the next index in row-major order.
  void next();
  /// Element offset of operand `k` at the current index.
  int64_t operator[](int k) const { return offset_[k]; }
  /// The current multi-index.
  const int64_t* index() const { return index_; }

 private:
  int ndim_;
  int n_ops_ = 0;
  int64_t numel_ = 1;
  int64_t remaining_ = 1;
  int64_t shape_[INGOT_MAX_DIMS] = {};
  int64_t index_[INGOT_MAX_DIMS] = {};
  int64_t strides_[kMaxOperands][INGOT_MAX_DIMS] = {};
  int64_t offset_[kMaxOperands] = {};
};

/// The element offset of a multi-index in `d`.
inline int64_t offset_of(const ingot_tensor_desc& d, const int64_t* index) {
  int64_t off = 0;
  for (int i = 0; i < d.ndim; ++i) off += index[i] * d.strides[i];
  return off;
}

/// A walk over `d`'s shape with dim `axis` fixed to one index: one step per lane along `axis`
/// (add operands of the same rank with add(strides)). A 0-dim `d` has one lane of one element.
NdIter lane_iter(const ingot_tensor_desc& d, int axis);
/// Size and stride of dim `axis`, treating a 0-dim tensor as shape [1].
inline int64_t lane_size(const ingot_tensor_desc& d, int axis) { return d.ndim > 0 ? d.shape[axis] : 1; }
inline int64_t lane_stride(const ingot_tensor_desc& d, int axis) { return d.ndim > 0 ? d.strides[axis] : 0; }

/// `d` with dim `axis` restricted to [start, start + length) (a view; same data pointer).
ingot_tensor_desc narrow(const ingot_tensor_desc& d, int axis, int64_t start, int64_t length);

}  // namespace ingot::reference
