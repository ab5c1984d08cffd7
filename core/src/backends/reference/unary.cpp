// Elementwise unary ops (NEG .. LOGICAL_NOT): computed per element in the input's compute type
// (float for f16/bf16), output dtype = input dtype except LOGICAL_NOT, which writes bool.
#include <algorithm>
#include <cmath>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

// Floating-point functions; C is float or double.
template <class C>
C float_op(int32_t op, C x, const void* attrs) {
  switch (op) {
    case INGOT_OP_EXP:
      return std::exp(x);
    case INGOT_OP_LOG:
      return std::log(x);
    case INGOT_OP_LOG1P:
      return std::log1p(x);
    case INGOT_OP_SQRT:
      return std::sqrt(x);
    case INGOT_OP_RSQRT:
      return C(1) / std::sqrt(x);
    case INGOT_OP_SIN:
      return std::sin(x);
    case INGOT_OP_COS:
      return std::cos(x);
    case INGOT_OP_TANH:
      return std::tanh(x);
    case INGOT_OP_SIGMOID:
      return C(1) / (C(1) + std::exp(-x));
    case INGOT_OP_GELU:
      return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
    case INGOT_OP_ERF:
      return std::erf(x);
    case INGOT_OP_GELU_TANH: {
      const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(inner));
    }
    case INGOT_OP_SOFTPLUS: {  // torch: linear where beta * x > threshold
      const auto& a = sdk::attr<ingot_attr_softplus>(attrs);
      const C beta = static_cast<C>(a.beta);
      if (x * beta > static_cast<C>(a.threshold)) return x;
      return std::log1p(std::exp(x * beta)) / beta;
    }
    case INGOT_OP_FLOOR:
      return std::floor(x);
    case INGOT_OP_CEIL:
      return std::ceil(x);
    case INGOT_OP_ROUND:
      return std::nearbyint(x);  // default rounding mode: half to even
    case INGOT_OP_RECIPROCAL:
      return C(1) / x;
    default:
      fail("{}: not a floating-point unary op", op_name(op));
  }
}

// Ops defined for every numeric type (C is float, double or an integer type).
template <class C>
C numeric_op(int32_t op, C x, const void* attrs) {
  switch (op) {
    case INGOT_OP_NEG:
      return sub_wrapping(C(0), x);
    case INGOT_OP_ABS:
      return x < C(0) ? sub_wrapping(C(0), x) : x;
    case INGOT_OP_RELU:
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(x)) return x;
      }
      return x > C(0) ? x : C(0);
    case INGOT_OP_SIGN:
      return static_cast<C>((C(0) < x) - (x < C(0)));  // sign(0) = 0
    case INGOT_OP_CLAMP: {                             // NaN stays NaN; min > max gives max, like torch.clamp
      const auto& a = sdk::attr<ingot_attr_clamp>(attrs);
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(x)) return x;
      }
      if (a.has_min && static_cast<double>(x) < a.min) x = convert<C>(a.min);
      if (a.has_max && static_cast<double>(x) > a.max) x = convert<C>(a.max);
      return x;
    }
    default:
      if constexpr (std::is_floating_point_v<C>)
        return float_op(op, x, attrs);
      else
        fail("{}: not defined for integer tensors", op_name(op));
  }
}

void run_logical_not(const sdk::OpCall& c) {
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& out = c.out[0];
  NdIter it(out);
  const int o = it.add(out.strides);
  const int i = it.add_broadcast(in, c.op);
  const void* src = sdk::data_ptr(in);
  void* dst = sdk::data_ptr(out);
  for (; !it.done(); it.next()) store_as<bool>(dst, out.dtype, it[o], !load_as<bool>(src, in.dtype, it[i]));
}

}  // namespace

void activate_as_stored(const sdk::OpCall& c, int32_t dtype, int32_t activation, std::vector<double>& y) {
  if (activation == INGOT_ACT_NONE) return;
  if (activation == INGOT_ACT_RELU6) {  // the stored value clamped (NaN stays NaN, as clamp's)
    visit_float(c, dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (double& v : y) {
        const double s = convert<double>(convert<T>(v));
        v = std::isnan(s) ? s : std::min(std::max(s, 0.0), 6.0);
      }
    });
    return;
  }
  const int32_t op = activation == INGOT_ACT_RELU        ? INGOT_OP_RELU
                     : activation == INGOT_ACT_GELU      ? INGOT_OP_GELU
                     : activation == INGOT_ACT_GELU_TANH ? INGOT_OP_GELU_TANH
                                                         : -1;
  if (op < 0) fail("reference: unknown activation {}", activation);
  visit_float(c, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    for (double& v : y) v = convert<double>(convert<T>(numeric_op<C>(op, convert<C>(convert<T>(v)), nullptr)));
  });
}

void run_unary(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  if (c.op == INGOT_OP_LOGICAL_NOT) return run_logical_not(c);
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, out, in.dtype, "output");
  NdIter it(out);
  const int o = it.add(out.strides);
  const int i = it.add_broadcast(in, c.op);
  visit_num(c, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* src = sdk::data_ptr<const T>(in);
    T* dst = sdk::data_ptr<T>(out);
    for (; !it.done(); it.next()) dst[it[o]] = convert<T>(numeric_op<C>(c.op, convert<C>(src[it[i]]), c.attrs));
  });
}

}  // namespace ingot::reference
