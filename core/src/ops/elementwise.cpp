// Elementwise ops: dtype promotion and broadcast shape inference, then one dispatch per op.
#include "ingot/ops/elementwise.h"

#include <cmath>

#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

using detail::check_op_dtype;

/// Unary op keeping the dtype (the op table decides which dtypes are accepted).
Tensor unary_same(OpKind op, const Tensor& x, const void* attrs = nullptr) {
  detail::check_defined(x, op_info(op).name, "input");
  check_op_dtype(op, x.dtype());
  return detail::run1(op, {x}, x.shape(), x.dtype(), attrs);
}

/// Unary float op: integer and bool inputs are computed in float32, like torch.
Tensor unary_float(OpKind op, const Tensor& x, const void* attrs = nullptr) {
  detail::check_defined(x, op_info(op).name, "input");
  const Tensor xf = is_floating(x.dtype()) ? x : x.to(DType::F32);
  return unary_same(op, xf, attrs);
}

/// floor / ceil / round: identity on integers.
Tensor unary_rounding(OpKind op, const Tensor& x) {
  detail::check_defined(x, op_info(op).name, "input");
  if (is_integral(x.dtype())) return x.clone();
  return unary_same(op, x);
}

Tensor binary(OpKind op, const Tensor& a, const Tensor& b) {
  const char* name = op_info(op).name;
  detail::check_defined(a, name, "first input");
  detail::check_defined(b, name, "second input");
  const Shape shape = detail::broadcast_for(name, a.shape(), b.shape());
  DType t = promote_types(a.dtype(), b.dtype());
  DType out = t;
  switch (op) {
    case INGOT_OP_ADD:
    case INGOT_OP_MAXIMUM:
      if (t == DType::Bool) op = INGOT_OP_LOGICAL_OR;
      break;
    case INGOT_OP_MUL:
    case INGOT_OP_MINIMUM:
      if (t == DType::Bool) op = INGOT_OP_LOGICAL_AND;
      break;
    case INGOT_OP_SUB:
      INGOT_CHECK_AS(t != DType::Bool, DTypeError,
                     "sub: subtracting two bool tensors is not supported; use logical_xor (ne)");
      break;
    case INGOT_OP_DIV:
    case INGOT_OP_POW:
      if (!is_floating(t)) t = out = DType::F32;
      break;
    case INGOT_OP_EQ:
    case INGOT_OP_NE:
      out = DType::Bool;
      break;
    case INGOT_OP_LT:
    case INGOT_OP_LE:
    case INGOT_OP_GT:
    case INGOT_OP_GE:
      if (t == DType::Bool) t = DType::U8;  // ordering of bools: false < true
      out = DType::Bool;
      break;
    case INGOT_OP_LOGICAL_AND:
    case INGOT_OP_LOGICAL_OR:
      t = out = DType::Bool;
      break;
    default:
      break;
  }
  check_op_dtype(op, t, "promoted input");
  return detail::run1(op, {a.to(t), b.to(t)}, shape, out);
}

/// The scalar joins promotion as a Python scalar: it raises the category, never the width.
Tensor binary_scalar(OpKind op, const Tensor& a, Scalar b, bool scalar_first) {
  detail::check_defined(a, op_info(op).name, "input");
  const DType t = promote_with_scalar(a.dtype(), b.kind);
  const Tensor x = a.to(t);
  const Tensor s = detail::scalar_on(b.value, t, a.device());
  return scalar_first ? binary(op, s, x) : binary(op, x, s);
}

}  // namespace

Tensor neg(const Tensor& x) { return unary_same(INGOT_OP_NEG, x); }
Tensor abs(const Tensor& x) { return unary_same(INGOT_OP_ABS, x); }
Tensor exp(const Tensor& x) { return unary_float(INGOT_OP_EXP, x); }
Tensor log(const Tensor& x) { return unary_float(INGOT_OP_LOG, x); }
Tensor log1p(const Tensor& x) { return unary_float(INGOT_OP_LOG1P, x); }
Tensor sqrt(const Tensor& x) { return unary_float(INGOT_OP_SQRT, x); }
Tensor rsqrt(const Tensor& x) { return unary_float(INGOT_OP_RSQRT, x); }
Tensor sin(const Tensor& x) { return unary_float(INGOT_OP_SIN, x); }
Tensor cos(const Tensor& x) { return unary_float(INGOT_OP_COS, x); }
Tensor tanh(const Tensor& x) { return unary_float(INGOT_OP_TANH, x); }
Tensor sigmoid(const Tensor& x) { return unary_float(INGOT_OP_SIGMOID, x); }
Tensor relu(const Tensor& x) { return unary_same(INGOT_OP_RELU, x); }
Tensor relu_backward(const Tensor& grad, const Tensor& x) {
  detail::check_defined(grad, "relu_backward", "grad");
  detail::check_defined(x, "relu_backward", "input");
  INGOT_CHECK_SHAPE(grad.shape() == x.shape(), "relu_backward: grad {} and input {} must have the same shape",
                    grad.shape().str(), x.shape().str());
  if (!is_floating(grad.dtype())) return where(gt(x, 0.0), grad, 0.0);
  return detail::run1(INGOT_OP_RELU_BWD, {grad, x.to(grad.dtype())}, grad.shape(), grad.dtype());
}
Tensor gelu_backward(const Tensor& grad, const Tensor& x, bool tanh) {
  detail::check_defined(grad, "gelu_backward", "grad");
  detail::check_defined(x, "gelu_backward", "input");
  INGOT_CHECK_SHAPE(grad.shape() == x.shape(), "gelu_backward: grad {} and input {} must have the same shape",
                    grad.shape().str(), x.shape().str());
  return detail::run1(tanh ? INGOT_OP_GELU_TANH_BWD : INGOT_OP_GELU_BWD, {grad, x.to(grad.dtype())}, grad.shape(),
                      grad.dtype());
}
Tensor gelu(const Tensor& x) { return unary_float(INGOT_OP_GELU, x); }
Tensor gelu_tanh(const Tensor& x) { return unary_float(INGOT_OP_GELU_TANH, x); }
Tensor erf(const Tensor& x) { return unary_float(INGOT_OP_ERF, x); }
Tensor sign(const Tensor& x) { return unary_same(INGOT_OP_SIGN, x); }
Tensor floor(const Tensor& x) { return unary_rounding(INGOT_OP_FLOOR, x); }
Tensor ceil(const Tensor& x) { return unary_rounding(INGOT_OP_CEIL, x); }
Tensor round(const Tensor& x) { return unary_rounding(INGOT_OP_ROUND, x); }
Tensor reciprocal(const Tensor& x) { return unary_float(INGOT_OP_RECIPROCAL, x); }

Tensor logical_not(const Tensor& x) {
  detail::check_defined(x, "logical_not", "input");
  return detail::run1(INGOT_OP_LOGICAL_NOT, {x}, x.shape(), DType::Bool);
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  INGOT_CHECK(beta != 0.0, "softplus: beta must be non-zero");
  auto attr = make_attr<ingot_attr_softplus>();
  attr.beta = beta;
  attr.threshold = threshold;
  return unary_float(INGOT_OP_SOFTPLUS, x, &attr);
}

Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max) {
  detail::check_defined(x, "clamp", "input");
  auto attr = make_attr<ingot_attr_clamp>();
  attr.has_min = min.has_value();
  attr.has_max = max.has_value();
  attr.min = min.value_or(0.0);
  attr.max = max.value_or(0.0);
  const auto fractional = [](std::optional<double> v) { return v && std::floor(*v) != *v; };
  Tensor xin = x;
  if (!is_floating(x.dtype()) && (fractional(min) || fractional(max))) xin = x.to(DType::F32);
  return unary_same(INGOT_OP_CLAMP, xin, &attr);
}

#define INGOT_DEFINE_BINARY(name, KIND)                                                          \
  Tensor name(const Tensor& a, const Tensor& b) { return binary(INGOT_OP_##KIND, a, b); }        \
  Tensor name(const Tensor& a, Scalar b) { return binary_scalar(INGOT_OP_##KIND, a, b, false); } \
  Tensor name(Scalar a, const Tensor& b) { return binary_scalar(INGOT_OP_##KIND, b, a, true); }
INGOT_DEFINE_BINARY(add, ADD)
INGOT_DEFINE_BINARY(sub, SUB)
INGOT_DEFINE_BINARY(mul, MUL)
INGOT_DEFINE_BINARY(div, DIV)
INGOT_DEFINE_BINARY(pow, POW)
INGOT_DEFINE_BINARY(maximum, MAXIMUM)
INGOT_DEFINE_BINARY(minimum, MINIMUM)
INGOT_DEFINE_BINARY(eq, EQ)
INGOT_DEFINE_BINARY(ne, NE)
INGOT_DEFINE_BINARY(lt, LT)
INGOT_DEFINE_BINARY(le, LE)
INGOT_DEFINE_BINARY(gt, GT)
INGOT_DEFINE_BINARY(ge, GE)
INGOT_DEFINE_BINARY(logical_and, LOGICAL_AND)
INGOT_DEFINE_BINARY(logical_or, LOGICAL_OR)
#undef INGOT_DEFINE_BINARY

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::check_defined(cond, "where", "cond");
  detail::check_defined(a, "where", "first value");
  detail::check_defined(b, "where", "second value");
  const Shape shape =
      detail::broadcast_for("where", detail::broadcast_for("where", cond.shape(), a.shape()), b.shape());
  const DType t = promote_types(a.dtype(), b.dtype());
  return detail::run1(INGOT_OP_WHERE, {cond.to(DType::Bool), a.to(t), b.to(t)}, shape, t);
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  detail::check_defined(a, "where", "first value");
  const DType t = promote_with_scalar(a.dtype(), b.kind);
  return where(cond, a.to(t), detail::scalar_on(b.value, t, a.device()));
}

Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  detail::check_defined(b, "where", "second value");
  const DType t = promote_with_scalar(b.dtype(), a.kind);
  return where(cond, detail::scalar_on(a.value, t, b.device()), b.to(t));
}

}  // namespace ingot
