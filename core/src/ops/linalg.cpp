// matmul / linear / conv2d: operand checks with both shapes in every message, output shapes,
// and dispatch of MATMUL and CONV2D with their fused bias and activation.
#include "ingot/ops/linalg.h"

#include "ingot/runtime/autocast_policy.h"
#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

/// Common floating dtype of the operands; DTypeError for integers, like torch's matmul on CPU
/// for mixed types (Ingot's MATMUL is floating only).
DType float_operands(const char* op, const Tensor& a, const Tensor& b, const Tensor& bias) {
  DType t = promote_types(a.dtype(), b.dtype());
  if (bias.defined()) t = promote_types(t, bias.dtype());
  INGOT_CHECK_AS(is_floating(t), DTypeError, "{}: expects floating tensors, got {} and {}", op, dtype_name(a.dtype()),
                 dtype_name(b.dtype()));
  return t;
}

Tensor matmul_impl(const char* op, const Tensor& a0, const Tensor& b0, const Tensor& bias, Activation act) {
  detail::check_defined(a0, op, "first operand");
  detail::check_defined(b0, op, "second operand");
  INGOT_CHECK_SHAPE(a0.dim() >= 1 && b0.dim() >= 1, "{}: both operands need at least 1 dim, got {} and {}", op,
                    a0.shape().str(), b0.shape().str());
  const DType t = float_operands(op, a0, b0, bias);
  const bool a_vec = a0.dim() == 1, b_vec = b0.dim() == 1;
  const Tensor a = a_vec ? a0.unsqueeze(0) : a0;
  const Tensor b = b_vec ? b0.unsqueeze(1) : b0;
  const int64_t m = a.shape()[a.dim() - 2], k = a.shape().back();
  const int64_t kb = b.shape()[b.dim() - 2], n = b.shape().back();
  INGOT_CHECK_SHAPE(k == kb, "{}: shapes {} and {} do not match: inner dims {} and {}", op, a0.shape().str(),
                    b0.shape().str(), k, kb);
  Shape batch_a(a.shape().data(), a.dim() - 2), batch_b(b.shape().data(), b.dim() - 2);
  Shape out;
  try {
    out = broadcast_shapes(batch_a, batch_b);
  } catch (const ShapeError&) {
    throw ShapeError(
        fmt::format("{}: batch dims of {} and {} do not broadcast", op, a0.shape().str(), b0.shape().str()));
  }
  out.push_back(m);
  out.push_back(n);
  // Under autocast the interceptor casts the operands (weights from its cache): no promotion here.
  const bool defer = autocast_lowers(INGOT_OP_MATMUL);
  const auto operand = [&](const Tensor& x) { return defer ? x : x.to(t); };
  std::vector<Tensor> inputs{operand(a), operand(b)};
  auto attr = make_attr<ingot_attr_matmul>();
  attr.activation = static_cast<int32_t>(act);
  if (bias.defined()) {
    INGOT_CHECK_SHAPE(bias.dim() == 1 && bias.shape()[0] == n, "{}: bias {} must be [{}] for {} x {}", op,
                      bias.shape().str(), n, a0.shape().str(), b0.shape().str());
    attr.has_bias = 1;
    inputs.push_back(operand(bias));
  }
  Tensor y = detail::run1(INGOT_OP_MATMUL, inputs, out, t, &attr);
  if (a_vec) y = y.squeeze(-2);
  if (b_vec) y = y.squeeze(-1);
  return y;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_impl("matmul", a, b, Tensor(), Activation::None); }

Tensor matmul_ex(const Tensor& a, const Tensor& b, const Tensor& bias, Activation activation) {
  return matmul_impl("matmul_ex", a, b, bias, activation);
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
  detail::check_defined(x, "linear", "input");
  detail::check_defined(w, "linear", "weight");
  INGOT_CHECK_SHAPE(w.dim() == 2, "linear: weight {} must be [out, in]", w.shape().str());
  INGOT_CHECK_SHAPE(x.dim() >= 1 && x.shape().back() == w.shape()[1],
                    "linear: input {} does not match weight {} (in features {})", x.shape().str(), w.shape().str(),
                    w.shape()[1]);
  return matmul_impl("linear", x, w.transpose(0, 1), bias, Activation::None);
}

ingot_attr_conv2d conv2d_attr(const Conv2dParams& p, bool has_bias, Activation activation) {
  auto attr = make_attr<ingot_attr_conv2d>();
  for (int i = 0; i < 2; ++i) {
    attr.stride[i] = p.stride[i];
    attr.padding[i] = p.padding[i];
    attr.dilation[i] = p.dilation[i];
  }
  attr.groups = p.groups;
  attr.has_bias = has_bias;
  attr.activation = static_cast<int32_t>(activation);
  return attr;
}

Conv2dParams conv2d_params(const ingot_attr_conv2d& attr) {
  Conv2dParams p;
  for (int i = 0; i < 2; ++i) {
    p.stride[i] = attr.stride[i];
    p.padding[i] = attr.padding[i];
    p.dilation[i] = attr.dilation[i];
  }
  p.groups = attr.groups;
  return p;
}

Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p) {
  INGOT_CHECK_SHAPE(x.size() == 4 && w.size() == 4, "conv2d: input {} must be NCHW and weight {} OIHW", x.str(),
                    w.str());
  INGOT_CHECK_SHAPE(p.groups >= 1 && w[0] % p.groups == 0 && x[1] == w[1] * p.groups,
                    "conv2d: input {} and weight {} do not match with groups={} (channels {} vs {} x {})", x.str(),
                    w.str(), p.groups, x[1], w[1], p.groups);
  Shape out{x[0], w[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    INGOT_CHECK_SHAPE(p.stride[i] >= 1 && p.dilation[i] >= 1 && p.padding[i] >= 0,
                      "conv2d: stride and dilation must be >= 1 and padding >= 0");
    const int64_t span = p.dilation[i] * (w[2 + i] - 1) + 1;
    const int64_t padded = x[2 + i] + 2 * p.padding[i];
    INGOT_CHECK_SHAPE(padded >= span, "conv2d: kernel {} (dilated to {}) is larger than the padded input {} of {}",
                      w.str(), span, padded, x.str());
    out[2 + i] = (padded - span) / p.stride[i] + 1;
  }
  return out;
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p, Activation activation) {
  detail::check_defined(x, "conv2d", "input");
  detail::check_defined(w, "conv2d", "weight");
  const DType t = float_operands("conv2d", x, w, bias);
  const Shape out = conv2d_output_shape(x.shape(), w.shape(), p);
  const bool defer = autocast_lowers(INGOT_OP_CONV2D);  // the interceptor casts (see matmul_impl)
  const auto operand = [&](const Tensor& v) { return defer ? v : v.to(t); };
  std::vector<Tensor> inputs{operand(x), operand(w)};
  if (bias.defined()) {
    INGOT_CHECK_SHAPE(bias.dim() == 1 && bias.shape()[0] == w.shape()[0], "conv2d: bias {} must be [{}] for weight {}",
                      bias.shape().str(), w.shape()[0], w.shape().str());
    inputs.push_back(operand(bias));
  }
  const auto attr = conv2d_attr(p, bias.defined(), activation);
  return detail::run1(INGOT_OP_CONV2D, inputs, out, t, &attr);
}

Tensor conv2d_backward_data(const Tensor& grad_y, const Tensor& w, const Shape& x_shape, const Conv2dParams& p) {
  detail::check_defined(grad_y, "conv2d_backward_data", "grad_y");
  detail::check_defined(w, "conv2d_backward_data", "weight");
  const Shape y = conv2d_output_shape(x_shape, w.shape(), p);
  INGOT_CHECK_SHAPE(y == grad_y.shape(), "conv2d_backward_data: grad_y {} does not match the output {} of x {} * w {}",
                    grad_y.shape().str(), y.str(), x_shape.str(), w.shape().str());
  const DType t = float_operands("conv2d_backward_data", grad_y, w, Tensor());
  const auto attr = conv2d_attr(p, false, Activation::None);
  return detail::run1(INGOT_OP_CONV2D_BWD_DATA, {grad_y.to(t), w.to(t)}, x_shape, t, &attr);
}

Tensor conv2d_backward_weight(const Tensor& x, const Tensor& grad_y, const Shape& w_shape, const Conv2dParams& p) {
  detail::check_defined(x, "conv2d_backward_weight", "input");
  detail::check_defined(grad_y, "conv2d_backward_weight", "grad_y");
  const Shape y = conv2d_output_shape(x.shape(), w_shape, p);
  INGOT_CHECK_SHAPE(y == grad_y.shape(),
                    "conv2d_backward_weight: grad_y {} does not match the output {} of x {} * w {}",
                    grad_y.shape().str(), y.str(), x.shape().str(), w_shape.str());
  const DType t = float_operands("conv2d_backward_weight", x, grad_y, Tensor());
  const auto attr = conv2d_attr(p, false, Activation::None);
  return detail::run1(INGOT_OP_CONV2D_BWD_WEIGHT, {x.to(t), grad_y.to(t)}, w_shape, t, &attr);
}

}  // namespace ingot
