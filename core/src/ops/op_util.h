// Private helpers of the functional op API: dtype checks against the op table, device checks,
// and one-output dispatch.
#pragma once

#include <string>
#include <vector>

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot::detail {

/// Throws DTypeError unless the op table accepts `t` for `op`; `what` names the tensor.
void check_op_dtype(OpKind op, DType t, const char* what = "input");
/// Throws unless `t` is defined; `what` names the argument.
void check_defined(const Tensor& t, const char* op, const char* what);
/// The common device of the inputs (all must agree); cpu when there are none.
Device common_device(const std::vector<Tensor>& inputs, const char* op);
/// Runs a one-output op and returns that output.
Tensor run1(OpKind op, const std::vector<Tensor>& inputs, const Shape& shape, DType dtype, const void* attrs = nullptr);
/// Broadcast of two shapes with the op's name in the error.
Shape broadcast_for(const char* op, const Shape& a, const Shape& b);
/// Wraps an axis with the op's name in the error.
int axis_for(const char* op, int64_t axis, int ndim);
/// "[2, 3]" helper for messages.
inline std::string s(const Shape& shape) { return shape.str(); }
/// A 0-dim tensor of `dtype` on `device` holding `value`.
Tensor scalar_on(double value, DType dtype, Device device);

}  // namespace ingot::detail
