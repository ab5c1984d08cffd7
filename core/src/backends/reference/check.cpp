// Argument checks and message helpers shared by the reference kernels.
#include "backends/reference/check.h"

namespace ingot::reference {

namespace {
const char* const kOpNames[] = {
#define INGOT_OP(ENUM, name, family, n_in, n_out, attr, dtypes, grad) name,
#include "ingot/plugin/op_table.def"
#undef INGOT_OP
};
}  // namespace

std::string shape_str(const ingot_tensor_desc& d) {
  std::string s = "[";
  for (int i = 0; i < d.ndim; ++i) s += (i > 0 ? ", " : "") + std::to_string(d.shape[i]);
  return s + "]";
}

const char* op_name(int32_t op) {
  if (op < 0 || op >= INGOT_OP_COUNT) return "unknown op";
  return kOpNames[op];
}

void expect_arity(const sdk::OpCall& c, int n_in, int n_out) {
  if (n_in >= 0 && c.n_in != n_in) fail("{}: expects {} inputs, got {}", op_name(c.op), n_in, c.n_in);
  if (n_in < 0 && c.n_in < 1) fail("{}: expects at least one input, got {}", op_name(c.op), c.n_in);
  if (c.n_out != n_out) fail("{}: expects {} outputs, got {}", op_name(c.op), n_out, c.n_out);
}

void expect_dtype(const sdk::OpCall& c, const ingot_tensor_desc& d, int32_t dtype, const char* what) {
  if (d.dtype != dtype) {
    fail("{}: {} is {}, expected {}", op_name(c.op), what, sdk::dtype_label(d.dtype), sdk::dtype_label(dtype));
  }
}

void expect_same_shape(const sdk::OpCall& c, const ingot_tensor_desc& a, const ingot_tensor_desc& b, const char* what_a,
                       const char* what_b) {
  bool same = a.ndim == b.ndim;
  for (int i = 0; same && i < a.ndim; ++i) same = a.shape[i] == b.shape[i];
  if (!same)
    fail("{}: {} {} and {} {} must have the same shape", op_name(c.op), what_a, shape_str(a), what_b, shape_str(b));
}

int wrap_axis(const sdk::OpCall& c, int64_t axis, int ndim) {
  const int rank = ndim > 0 ? ndim : 1;  // a 0-dim tensor has one implicit axis, like torch
  if (axis < -rank || axis >= rank) fail("{}: axis {} out of range for a {}-d tensor", op_name(c.op), axis, ndim);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace ingot::reference
