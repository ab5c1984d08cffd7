// Private helpers of the functional op API (see op_util.h).
#include "ops/op_util.h"

namespace ingot::detail {

void check_op_dtype(OpKind op, DType t, const char* what) {
  const OpInfo& info = op_info(op);
  INGOT_CHECK_AS((info.dtypes & dtype_bit(t)) != 0, DTypeError, "{}: {} of dtype {} is not supported", info.name, what,
                 dtype_name(t));
}

void check_defined(const Tensor& t, const char* op, const char* what) {
  INGOT_CHECK(t.defined(), "{}: {} is an undefined tensor", op, what);
}

Device common_device(const std::vector<Tensor>& inputs, const char* op) {
  Device d = Device::cpu();
  bool first = true;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (first) {
      d = t.device();
      first = false;
    }
    INGOT_CHECK(t.device() == d, "{}: inputs on different devices ({} and {})", op, d.str(), t.device().str());
  }
  return d;
}

Tensor run1(OpKind op, const std::vector<Tensor>& inputs, const Shape& shape, DType dtype, const void* attrs) {
  const Device device = common_device(inputs, op_info(op).name);
  return run_op(op, inputs, {OutputSpec{shape, dtype}}, attrs, device).front();
}

Shape broadcast_for(const char* op, const Shape& a, const Shape& b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const ShapeError& e) {
    throw ShapeError(fmt::format("{}: {}", op, e.what()));
  }
}

int axis_for(const char* op, int64_t axis, int ndim) { return wrap_axis(axis, ndim, op); }

Tensor scalar_on(double value, DType dtype, Device device) { return Tensor::scalar(value, dtype).to(device); }

}  // namespace ingot::detail
