// Argument checks of the reference kernels: each failure is an sdk::Failure(INVALID_ARGUMENT)
// whose message names the op and the offending shapes.
#pragma once

#include <fmt/format.h>

#include <string>

#include "ingot/plugin/sdk.h"

namespace ingot::reference {

/// "[2, 3]" for a descriptor's shape.
std::string shape_str(const ingot_tensor_desc& d);
/// Name of an op kind ("conv2d").
const char* op_name(int32_t op);

/// An optional tensor that is not there: core passes absent inputs as descriptors without data
/// (ndim 0), and 0-size tensors stand for "not wanted".
inline bool is_absent(const ingot_tensor_desc& d) { return d.data == nullptr || sdk::numel(d) == 0; }

/// Throws INGOT_ERR_INVALID_ARGUMENT with a formatted message.
template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, fmt::format(format, std::forward<Args>(args)...));
}

/// Checks the input and output counts (n_in < 0: at least one input).
void expect_arity(const sdk::OpCall& c, int n_in, int n_out);
/// Checks that `d` has dtype `dtype`; `what` names the tensor ("input 1").
void expect_dtype(const sdk::OpCall& c, const ingot_tensor_desc& d, int32_t dtype, const char* what);
/// Checks that two descriptors have equal shapes.
void expect_same_shape(const sdk::OpCall& c, const ingot_tensor_desc& a, const ingot_tensor_desc& b, const char* what_a,
                       const char* what_b);
/// Wraps a possibly negative axis into [0, ndim).
int wrap_axis(const sdk::OpCall& c, int64_t axis, int ndim);

}  // namespace ingot::reference
