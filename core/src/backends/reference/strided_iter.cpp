// Row-major walk over an N-d index space with per-operand strided offsets (see strided_iter.h).
#include "backends/reference/strided_iter.h"

#include "backends/reference/check.h"

namespace ingot::reference {

NdIter::NdIter(int ndim, const int64_t* shape) : ndim_(ndim) {
  for (int i = 0; i < ndim; ++i) {
    shape_[i] = shape[i];
    numel_ *= shape[i];
  }
  remaining_ = numel_;
}

int NdIter::add(const int64_t* strides) {
  if (n_ops_ == kMaxOperands) fail("reference: NdIter supports at most {} operands", kMaxOperands);
  for (int i = 0; i < ndim_; ++i) strides_[n_ops_][i] = strides[i];
  offset_[n_ops_] = 0;
  return n_ops_++;
}

int NdIter::add_broadcast(const ingot_tensor_desc& d, int32_t op) {
  if (d.ndim > ndim_) fail("{}: input {} has more dims than the output's {}", op_name(op), shape_str(d), ndim_);
  int64_t strides[INGOT_MAX_DIMS] = {};
  const int lead = ndim_ - d.ndim;
  for (int i = 0; i < d.ndim; ++i) {
    const int64_t size = d.shape[i];
    if (size == shape_[lead + i]) {
      strides[lead + i] = size == 1 ? 0 : d.strides[i];
    } else if (size == 1) {
      strides[lead + i] = 0;
    } else {
      ingot_tensor_desc out{};
      out.ndim = ndim_;
      for (int k = 0; k < ndim_; ++k) out.shape[k] = shape_[k];
      fail("{}: input {} does not broadcast to output {}", op_name(op), shape_str(d), shape_str(out));
    }
  }
  return add(strides);
}

void NdIter::next() {
  --remaining_;
  for (int i = ndim_ - 1; i >= 0; --i) {
    if (++index_[i] < shape_[i]) {
      for (int k = 0; k < n_ops_; ++k) offset_[k] += strides_[k][i];
      return;
    }
    index_[i] = 0;
    for (int k = 0; k < n_ops_; ++k) offset_[k] -= strides_[k][i] * (shape_[i] - 1);
  }
}

NdIter lane_iter(const ingot_tensor_desc& d, int axis) {
  int64_t shape[INGOT_MAX_DIMS] = {};
  for (int i = 0; i < d.ndim; ++i) shape[i] = i == axis ? 1 : d.shape[i];
  return NdIter(d.ndim, shape);
}

ingot_tensor_desc narrow(const ingot_tensor_desc& d, int axis, int64_t start, int64_t length) {
  ingot_tensor_desc v = d;
  v.shape[axis] = length;
  v.byte_offset += start * d.strides[axis] * sdk::dtype_size(d.dtype);
  return v;
}

}  // namespace ingot::reference
