// Creation ops: FILL and ARANGE, placed on the requested device.
#include "ingot/ops/creation.h"

#include <cmath>

#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"

namespace ingot {

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  for (int64_t d : shape) INGOT_CHECK_SHAPE(d >= 0, "full: negative dim in shape {}", shape.str());
  auto attr = make_attr<ingot_attr_scalar>();
  attr.value = value;
  return run_op(INGOT_OP_FILL, {}, {OutputSpec{shape, dtype}}, &attr, device).front();
}

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }

Tensor full_like(const Tensor& x, double value) {
  INGOT_CHECK(x.defined(), "full_like: undefined tensor");
  return full(x.shape(), value, x.dtype(), x.device());
}

Tensor zeros_like(const Tensor& x) { return full_like(x, 0.0); }
Tensor ones_like(const Tensor& x) { return full_like(x, 1.0); }

Tensor arange(double start, double end, double step, std::optional<DType> dtype, Device device) {
  INGOT_CHECK(step != 0.0 && std::isfinite(start) && std::isfinite(end) && std::isfinite(step),
              "arange: start {}, end {}, step {} must be finite and step non-zero", start, end, step);
  const auto whole = [](double v) { return std::floor(v) == v; };
  const DType t = dtype.value_or(whole(start) && whole(end) && whole(step) ? DType::I64 : DType::F32);
  const double n = std::ceil((end - start) / step);
  const int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
  auto attr = make_attr<ingot_attr_arange>();
  attr.start = start;
  attr.step = step;
  return run_op(INGOT_OP_ARANGE, {}, {OutputSpec{Shape{count}, t}}, &attr, device).front();
}

Tensor arange(double end, std::optional<DType> dtype, Device device) { return arange(0.0, end, 1.0, dtype, device); }

}  // namespace ingot
