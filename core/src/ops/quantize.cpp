// Quantized ops: QParams construction and checks, then dispatch of QUANTIZE, DEQUANTIZE, QLINEAR
// and QCONV2D with their scale and zero-point tensors beside the data (op_table.def has the rules).
#include "ingot/ops/quantize.h"

#include <cmath>
#include <tuple>

#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

bool is_q8(DType t) { return t == DType::U8 || t == DType::I8; }

void check_q8(const char* op, DType t, const char* what) {
  INGOT_CHECK_AS(is_q8(t), DTypeError, "{}: {} must be uint8 or int8, got {}", op, what, dtype_name(t));
}

void check_scale(const char* op, double scale) {
  INGOT_CHECK_AS(std::isfinite(scale) && scale > 0.0, InputError, "{}: scale {} must be positive and finite", op,
                 scale);
}

void check_zero_point(const char* op, int32_t zp, DType dtype) {
  const auto [lo, hi] = quant_range(dtype);
  INGOT_CHECK_AS(zp >= lo && zp <= hi, InputError, "{}: zero point {} is outside {}'s range [{}, {}]", op, zp,
                 dtype_name(dtype), lo, hi);
}

// The parameters' own consistency: f32 scale and i32 zero point of one shape, [1] or [C], a quant
// range inside the dtype's. `what` names the tensor they describe in messages.
void check_params(const char* op, const QParams& q, const char* what) {
  INGOT_CHECK_AS(q.scale.defined() && q.zero_point.defined(), InputError,
                 "{}: the {} parameters have no scale or zero point (make them with QParams::per_tensor or "
                 "per_channel_of)",
                 op, what);
  INGOT_CHECK_AS(q.scale.dtype() == DType::F32 && q.zero_point.dtype() == DType::I32, DTypeError,
                 "{}: the {} scale must be float32 and its zero point int32, got {} and {}", op, what,
                 dtype_name(q.scale.dtype()), dtype_name(q.zero_point.dtype()));
  INGOT_CHECK_SHAPE(q.scale.dim() <= 1 && q.scale.numel() >= 1 && q.zero_point.shape() == q.scale.shape(),
                    "{}: the {} scale {} and zero point {} must have one shape, [1] or [channels]", op, what,
                    q.scale.shape().str(), q.zero_point.shape().str());
  check_q8(op, q.dtype, "the quantized dtype");
  const auto [lo, hi] = quant_range(q.dtype);
  INGOT_CHECK_AS(lo <= q.quant_min && q.quant_min <= q.quant_max && q.quant_max <= hi, InputError,
                 "{}: the {} quant range [{}, {}] must be ordered and inside {}'s [{}, {}]", op, what, q.quant_min,
                 q.quant_max, dtype_name(q.dtype), lo, hi);
}

// Checks per-channel parameters against the tensor `shape` they describe and returns the axis
// wrapped into [0, rank) (0 for per-tensor parameters).
int channel_axis(const char* op, const QParams& q, const Shape& shape, const char* what) {
  if (!q.per_channel()) return 0;
  const int rank = static_cast<int>(shape.size());
  INGOT_CHECK_SHAPE(q.axis >= -rank && q.axis < rank, "{}: the {} channel axis {} is outside a {}-d tensor {}", op,
                    what, q.axis, rank, shape.str());
  const int axis = q.axis < 0 ? q.axis + rank : q.axis;
  INGOT_CHECK_SHAPE(q.scale.numel() == shape[axis], "{}: {} per-channel scales for {} {} along axis {} (size {})", op,
                    q.scale.numel(), what, shape.str(), axis, shape[axis]);
  return axis;
}

ingot_attr_quantize quantize_attr(int axis, const QParams& q) {
  auto a = make_attr<ingot_attr_quantize>();
  a.axis = axis;
  a.quant_min = q.quant_min;
  a.quant_max = q.quant_max;
  return a;
}

// The operands of QLINEAR / QCONV2D after x and w: their parameters, the bias and the output's
// parameters as the op table orders them; returns the output dtype.
DType append_operands(const char* op, std::vector<Tensor>& inputs, const Tensor& x, const QParams& xq, const Tensor& w,
                      const QParams& wq, const Tensor& bias, int64_t channels, QOutput kind, Activation activation,
                      const QParams* out) {
  detail::check_defined(x, op, "input");
  detail::check_defined(w, op, "weight");
  check_q8(op, x.dtype(), "the input");
  INGOT_CHECK_AS(w.dtype() == DType::I8, DTypeError, "{}: the weight must be int8, got {}", op, dtype_name(w.dtype()));
  check_params(op, xq, "input");
  check_params(op, wq, "weight");
  INGOT_CHECK_AS(xq.dtype == x.dtype() && wq.dtype == DType::I8, DTypeError,
                 "{}: parameters for {} input and {} weight describe {} and {} tensors", op, dtype_name(x.dtype()),
                 dtype_name(w.dtype()), dtype_name(xq.dtype), dtype_name(wq.dtype));
  INGOT_CHECK_AS(!xq.per_channel(), InputError, "{}: the input must be quantized per tensor, got {}", op, xq.str());
  if (wq.per_channel()) {
    INGOT_CHECK_AS(wq.axis == 0, InputError, "{}: per-channel weight parameters must be along axis 0 (outputs), got {}",
                   op, wq.axis);
    INGOT_CHECK_SHAPE(wq.scale.numel() == channels, "{}: {} weight scales for weight {} with {} outputs", op,
                      wq.scale.numel(), w.shape().str(), channels);
  }
  const Device d = x.device();
  inputs = {x, xq.scale.to(d), xq.zero_point.to(d), w, wq.scale.to(d), wq.zero_point.to(d)};
  if (kind == QOutput::I32) {
    INGOT_CHECK_AS(!bias.defined() && activation == Activation::None, InputError,
                   "{}: an int32 output is the raw accumulator: no bias and no activation", op);
    return DType::I32;
  }
  if (bias.defined()) {
    INGOT_CHECK_SHAPE(bias.dim() == 1 && bias.shape()[0] == channels, "{}: bias {} must be [{}] for weight {}", op,
                      bias.shape().str(), channels, w.shape().str());
    INGOT_CHECK_AS(bias.dtype() == DType::F32, DTypeError, "{}: the bias must be float32, got {}", op,
                   dtype_name(bias.dtype()));
    inputs.push_back(bias);
  }
  if (kind == QOutput::F32) return DType::F32;
  INGOT_CHECK_AS(out != nullptr, InputError, "{}: a requantized output needs its parameters (out)", op);
  check_params(op, *out, "output");
  INGOT_CHECK_AS(!out->per_channel(), InputError, "{}: the output must be quantized per tensor, got {}", op,
                 out->str());
  inputs.push_back(out->scale.to(d));
  inputs.push_back(out->zero_point.to(d));
  return out->dtype;
}

}  // namespace

std::pair<int32_t, int32_t> quant_range(DType dtype) {
  if (dtype == DType::U8) return {0, 255};
  if (dtype == DType::I8) return {-128, 127};
  throw DTypeError(fmt::format("quant_range: {} is not a quantized dtype (uint8 or int8)", dtype_name(dtype)));
}

QParams QParams::per_tensor(double scale, int32_t zero_point, DType dtype, Device device) {
  check_q8("QParams::per_tensor", dtype, "dtype");
  check_scale("QParams::per_tensor", scale);
  check_zero_point("QParams::per_tensor", zero_point, dtype);
  QParams q;
  q.scale = Tensor::from_vector<float>({static_cast<float>(scale)}, {1}).to(device);
  q.zero_point = Tensor::from_vector<int32_t>({zero_point}, {1}).to(device);
  q.dtype = dtype;
  std::tie(q.quant_min, q.quant_max) = quant_range(dtype);
  return q;
}

QParams QParams::per_channel_of(const std::vector<float>& scales, const std::vector<int32_t>& zero_points, int axis,
                                DType dtype, Device device) {
  check_q8("QParams::per_channel_of", dtype, "dtype");
  INGOT_CHECK_AS(!scales.empty() && scales.size() == zero_points.size(), InputError,
                 "QParams::per_channel_of: {} scales and {} zero points (need one of each per channel)", scales.size(),
                 zero_points.size());
  for (size_t i = 0; i < scales.size(); ++i) {
    check_scale("QParams::per_channel_of", scales[i]);
    check_zero_point("QParams::per_channel_of", zero_points[i], dtype);
  }
  QParams q;
  const auto n = static_cast<int64_t>(scales.size());
  q.scale = Tensor::from_vector<float>(scales, {n}).to(device);
  q.zero_point = Tensor::from_vector<int32_t>(zero_points, {n}).to(device);
  q.axis = axis;
  q.dtype = dtype;
  std::tie(q.quant_min, q.quant_max) = quant_range(dtype);
  return q;
}

QParams QParams::to(Device device) const {
  QParams q = *this;
  if (q.scale.defined()) q.scale = q.scale.to(device);
  if (q.zero_point.defined()) q.zero_point = q.zero_point.to(device);
  return q;
}

std::string QParams::str() const {
  const char* type = dtype == DType::U8 ? "u8" : dtype == DType::I8 ? "i8" : "?";
  if (!scale.defined() || !zero_point.defined()) return fmt::format("{} (no parameters)", type);
  if (per_channel()) return fmt::format("{} per channel ({}) axis {}", type, scale.numel(), axis);
  return fmt::format("{} per tensor scale {:g} zp {}", type, scale.item(), static_cast<int64_t>(zero_point.item()));
}

Tensor quantize(const Tensor& x, const QParams& q) {
  detail::check_defined(x, "quantize", "input");
  detail::check_op_dtype(INGOT_OP_QUANTIZE, x.dtype());
  check_params("quantize", q, "output");
  const int axis = channel_axis("quantize", q, x.shape(), "input");
  const auto attr = quantize_attr(axis, q);
  const Device d = x.device();
  return detail::run1(INGOT_OP_QUANTIZE, {x, q.scale.to(d), q.zero_point.to(d)}, x.shape(), q.dtype, &attr);
}

Tensor dequantize(const Tensor& q, const QParams& qp) {
  detail::check_defined(q, "dequantize", "input");
  detail::check_op_dtype(INGOT_OP_DEQUANTIZE, q.dtype());
  check_params("dequantize", qp, "input");
  INGOT_CHECK_AS(!is_q8(q.dtype()) || q.dtype() == qp.dtype, DTypeError,
                 "dequantize: the tensor is {} but its parameters describe {}", dtype_name(q.dtype()),
                 dtype_name(qp.dtype));
  const int axis = channel_axis("dequantize", qp, q.shape(), "input");
  const auto attr = quantize_attr(axis, qp);
  const Device d = q.device();
  return detail::run1(INGOT_OP_DEQUANTIZE, {q, qp.scale.to(d), qp.zero_point.to(d)}, q.shape(), DType::F32, &attr);
}

Tensor quantized_linear(const Tensor& x, const QParams& xq, const Tensor& w, const QParams& wq, const Tensor& bias,
                        QOutput kind, Activation activation, const QParams* out) {
  detail::check_defined(w, "quantized_linear", "weight");
  INGOT_CHECK_SHAPE(w.dim() == 2, "quantized_linear: weight {} must be [out, in]", w.shape().str());
  const int64_t n = w.shape()[0], k = w.shape()[1];
  std::vector<Tensor> inputs;
  const DType dtype = append_operands("quantized_linear", inputs, x, xq, w, wq, bias, n, kind, activation, out);
  INGOT_CHECK_SHAPE(x.dim() >= 1 && x.shape().back() == k,
                    "quantized_linear: input {} does not match weight {} (in features {})", x.shape().str(),
                    w.shape().str(), k);
  Shape shape = x.shape();
  shape[shape.size() - 1] = n;
  auto attr = make_attr<ingot_attr_matmul>();
  attr.has_bias = bias.defined() ? 1 : 0;
  attr.activation = static_cast<int32_t>(activation);
  return detail::run1(INGOT_OP_QLINEAR, inputs, shape, dtype, &attr);
}

Tensor quantized_conv2d(const Tensor& x, const QParams& xq, const Tensor& w, const QParams& wq, const Tensor& bias,
                        const Conv2dParams& p, QOutput kind, Activation activation, const QParams* out) {
  detail::check_defined(x, "quantized_conv2d", "input");
  detail::check_defined(w, "quantized_conv2d", "weight");
  const Shape shape = conv2d_output_shape(x.shape(), w.shape(), p);
  std::vector<Tensor> inputs;
  const DType dtype =
      append_operands("quantized_conv2d", inputs, x, xq, w, wq, bias, w.shape()[0], kind, activation, out);
  const auto attr = conv2d_attr(p, bias.defined(), activation);
  return detail::run1(INGOT_OP_QCONV2D, inputs, shape, dtype, &attr);
}

}  // namespace ingot
