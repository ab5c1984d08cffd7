// Normalisation ops: shape checks, statistics shapes, optional affine parameters and running
// statistics (absent ones are passed as constants with has_affine = 0, since the op's arity is fixed).
#include "ingot/ops/norm.h"

#include "ingot/ops/creation.h"
#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

void check_float(const char* op, const Tensor& x) {
  INGOT_CHECK_AS(is_floating(x.dtype()), DTypeError, "{}: expects a floating input, got {}", op, dtype_name(x.dtype()));
}

/// Half-precision inputs keep their statistics in float32, like torch.
DType stat_dtype(DType t) { return (t == DType::F16 || t == DType::BF16) ? DType::F32 : t; }

Tensor softmax_like(OpKind op, const Tensor& x, int64_t axis) {
  const char* name = op_info(op).name;
  detail::check_defined(x, name, "input");
  check_float(name, x);
  auto attr = make_attr<ingot_attr_axis>();
  attr.axis = detail::axis_for(name, axis, x.dim());
  return detail::run1(op, {x}, x.shape(), x.dtype(), &attr);
}

Tensor softmax_like_backward(OpKind op, const Tensor& y, const Tensor& grad_y, int64_t axis) {
  const char* name = op_info(op).name;
  detail::check_defined(y, name, "output");
  detail::check_defined(grad_y, name, "grad_y");
  check_float(name, y);
  INGOT_CHECK_SHAPE(y.shape() == grad_y.shape(), "{}: output {} and grad_y {} differ", name, y.shape().str(),
                    grad_y.shape().str());
  auto attr = make_attr<ingot_attr_axis>();
  attr.axis = detail::axis_for(name, axis, y.dim());
  return detail::run1(op, {y, grad_y.to(y.dtype())}, y.shape(), y.dtype(), &attr);
}

/// Leading dims of x, trailing normalized dims set to 1.
Shape layer_norm_stat_shape(const char* op, const Shape& x, const Shape& normalized) {
  INGOT_CHECK_SHAPE(normalized.size() >= 1 && normalized.size() <= x.size(),
                    "{}: normalized_shape {} does not fit input {}", op, normalized.str(), x.str());
  Shape stat = x;
  const int lead = x.size() - normalized.size();
  for (int d = 0; d < normalized.size(); ++d) {
    INGOT_CHECK_SHAPE(x[lead + d] == normalized[d], "{}: input {} does not end with normalized_shape {}", op, x.str(),
                      normalized.str());
    stat[lead + d] = 1;
  }
  return stat;
}

Tensor param_or(const Tensor& t, const char* op, const char* what, const Shape& shape, double fill, DType dtype,
                Device device) {
  if (!t.defined()) return full(shape, fill, dtype, device);
  INGOT_CHECK_SHAPE(t.shape() == shape, "{}: {} {} must be {}", op, what, t.shape().str(), shape.str());
  return t.to(dtype);
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) { return softmax_like(INGOT_OP_SOFTMAX, x, axis); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return softmax_like(INGOT_OP_LOG_SOFTMAX, x, axis); }
Tensor softmax_backward(const Tensor& y, const Tensor& grad_y, int64_t axis) {
  return softmax_like_backward(INGOT_OP_SOFTMAX_BWD, y, grad_y, axis);
}
Tensor log_softmax_backward(const Tensor& y, const Tensor& grad_y, int64_t axis) {
  return softmax_like_backward(INGOT_OP_LOG_SOFTMAX_BWD, y, grad_y, axis);
}

LayerNormResult layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                           double eps) {
  detail::check_defined(x, "layer_norm", "input");
  check_float("layer_norm", x);
  const Shape stat = layer_norm_stat_shape("layer_norm", x.shape(), normalized_shape);
  auto attr = make_attr<ingot_attr_layer_norm>();
  attr.normalized_ndim = normalized_shape.size();
  attr.has_affine = weight.defined() || bias.defined();
  attr.eps = eps;
  const Tensor w = param_or(weight, "layer_norm", "weight", normalized_shape, 1.0, x.dtype(), x.device());
  const Tensor b = param_or(bias, "layer_norm", "bias", normalized_shape, 0.0, x.dtype(), x.device());
  const DType st = stat_dtype(x.dtype());
  auto ys = run_op(INGOT_OP_LAYER_NORM, {x, w, b},
                   {OutputSpec{x.shape(), x.dtype()}, OutputSpec{stat, st}, OutputSpec{stat, st}}, &attr, x.device());
  return {ys[0], ys[1], ys[2]};
}

NormGrads layer_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                              const Tensor& weight, const Shape& normalized_shape, double eps) {
  detail::check_defined(grad_y, "layer_norm_backward", "grad_y");
  detail::check_defined(x, "layer_norm_backward", "input");
  check_float("layer_norm_backward", x);
  const Shape stat = layer_norm_stat_shape("layer_norm_backward", x.shape(), normalized_shape);
  INGOT_CHECK_SHAPE(grad_y.shape() == x.shape() && mean.shape() == stat && rstd.shape() == stat,
                    "layer_norm_backward: grad_y {}, mean {}, rstd {} do not fit input {}", grad_y.shape().str(),
                    mean.shape().str(), rstd.shape().str(), x.shape().str());
  auto attr = make_attr<ingot_attr_layer_norm>();
  attr.normalized_ndim = normalized_shape.size();
  attr.has_affine = 1;  // the weight is ones when absent; the parameter gradients are always computed
  attr.eps = eps;
  const Tensor w = param_or(weight, "layer_norm_backward", "weight", normalized_shape, 1.0, x.dtype(), x.device());
  auto gs = run_op(INGOT_OP_LAYER_NORM_BWD, {grad_y.to(x.dtype()), x, mean, rstd, w},
                   {OutputSpec{x.shape(), x.dtype()}, OutputSpec{normalized_shape, x.dtype()},
                    OutputSpec{normalized_shape, x.dtype()}},
                   &attr, x.device());
  return {gs[0], gs[1], gs[2]};
}

BatchNormResult batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, bool training, double momentum, double eps) {
  detail::check_defined(x, "batch_norm", "input");
  check_float("batch_norm", x);
  INGOT_CHECK_SHAPE(x.dim() >= 2, "batch_norm: input {} needs a channel dim (N, C, ...)", x.shape().str());
  INGOT_CHECK(training || (running_mean.defined() && running_var.defined()),
              "batch_norm: eval mode needs running_mean and running_var");
  const Shape c{x.shape()[1]};
  const DType st = stat_dtype(x.dtype());
  auto attr = make_attr<ingot_attr_batch_norm>();
  attr.training = training;
  attr.has_affine = weight.defined() || bias.defined();
  attr.eps = eps;
  attr.momentum = momentum;
  // Half-precision input (under autocast): the affine parameters stay in the statistics' f32,
  // as torch's mixed-dtype batch norm keeps them.
  const Tensor w = param_or(weight, "batch_norm", "weight", c, 1.0, st, x.device());
  const Tensor b = param_or(bias, "batch_norm", "bias", c, 0.0, st, x.device());
  // Running statistics are updated in place, so they are passed as they are (no cast).
  for (const Tensor* r : {&running_mean, &running_var}) {
    if (r->defined()) {
      INGOT_CHECK_SHAPE(r->shape() == c, "batch_norm: running statistics {} must be {}", r->shape().str(), c.str());
    }
  }
  const Tensor rm = running_mean.defined() ? running_mean : zeros(c, st, x.device());
  const Tensor rv = running_var.defined() ? running_var : ones(c, st, x.device());
  auto ys = run_op(INGOT_OP_BATCH_NORM, {x, w, b, rm, rv},
                   {OutputSpec{x.shape(), x.dtype()}, OutputSpec{c, st}, OutputSpec{c, st}}, &attr, x.device());
  return {ys[0], ys[1], ys[2]};
}

NormGrads batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                              const Tensor& save_invstd, bool training, double eps) {
  detail::check_defined(grad_y, "batch_norm_backward", "grad_y");
  detail::check_defined(x, "batch_norm_backward", "input");
  check_float("batch_norm_backward", x);
  INGOT_CHECK_SHAPE(x.dim() >= 2 && grad_y.shape() == x.shape(), "batch_norm_backward: grad_y {} must match input {}",
                    grad_y.shape().str(), x.shape().str());
  const Shape c{x.shape()[1]};
  INGOT_CHECK_SHAPE(save_mean.shape() == c && save_invstd.shape() == c,
                    "batch_norm_backward: save_mean {} and save_invstd {} must be {}", save_mean.shape().str(),
                    save_invstd.shape().str(), c.str());
  auto attr = make_attr<ingot_attr_batch_norm>();
  attr.training = training;
  attr.has_affine = 1;  // the weight is ones when absent; the parameter gradients are always computed
  attr.eps = eps;
  const DType st = stat_dtype(x.dtype());  // the affine parameters' dtype (see batch_norm)
  const Tensor w = param_or(weight, "batch_norm_backward", "weight", c, 1.0, st, x.device());
  auto gs = run_op(INGOT_OP_BATCH_NORM_BWD, {grad_y.to(x.dtype()), x, w, save_mean, save_invstd},
                   {OutputSpec{x.shape(), x.dtype()}, OutputSpec{c, st}, OutputSpec{c, st}}, &attr, x.device());
  return {gs[0], gs[1], gs[2]};
}

}  // namespace ingot
