// Elementwise binary arithmetic (ADD SUB MUL DIV POW MAXIMUM MINIMUM, ADD_RELU, and RELU_BWD GELU_BWD
// GELU_TANH_BWD) with NumPy broadcasting, and ADD_RELU_BWD (three inputs of one shape); inputs
// already have the output's dtype; f16/bf16 compute in float.
#include <cmath>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

template <class C>
C apply(int32_t op, C a, C b) {
  switch (op) {
    case INGOT_OP_ADD:
      return add_wrapping(a, b);
    case INGOT_OP_SUB:
      return sub_wrapping(a, b);
    case INGOT_OP_MUL:
      return mul_wrapping(a, b);
    case INGOT_OP_DIV:
      if constexpr (std::is_floating_point_v<C>)
        return a / b;
      else
        fail("div: integer division is not an op (core casts to float first)");
    case INGOT_OP_POW:
      if constexpr (std::is_floating_point_v<C>)
        return std::pow(a, b);
      else
        fail("pow: integer pow is not an op (core casts to float first)");
    case INGOT_OP_MAXIMUM:
    case INGOT_OP_MINIMUM:  // NaN propagates, like torch.maximum / torch.minimum
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
      }
      return op == INGOT_OP_MAXIMUM ? (a > b ? a : b) : (a < b ? a : b);
    case INGOT_OP_RELU_BWD:  // (grad, x): no NaN special case, like oneDNN's relu backward
      return b > C(0) ? a : C(0);
    case INGOT_OP_ADD_RELU: {  // relu's rule (unary.cpp) on the sum: NaN stays NaN
      const C s = add_wrapping(a, b);
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(s)) return s;
      }
      return s > C(0) ? s : C(0);
    }
    case INGOT_OP_GELU_BWD:  // (grad, x): Phi(x) + x phi(x)
      if constexpr (std::is_floating_point_v<C>) {
        const C cdf = C(0.5) * (C(1) + std::erf(b * C(0.70710678118654752440)));
        const C pdf = std::exp(C(-0.5) * b * b) * C(0.39894228040143267794);
        return a * (cdf + b * pdf);
      } else {
        fail("gelu_bwd: floating dtypes only");
      }
    case INGOT_OP_GELU_TANH_BWD:  // 0.5 (1 + t) + 0.5 x (1 - t^2) u', t = tanh(u), u = k (x + 0.044715 x^3)
      if constexpr (std::is_floating_point_v<C>) {
        const C k = C(0.79788456080286535588);
        const C t = std::tanh(k * (b + C(0.044715) * b * b * b));
        return a * (C(0.5) * (C(1) + t) + C(0.5) * b * (C(1) - t * t) * k * (C(1) + C(3 * 0.044715) * b * b));
      } else {
        fail("gelu_tanh_bwd: floating dtypes only");
      }
    default:
      fail("{}: not a binary arithmetic op", op_name(op));
  }
}

}  // namespace

void run_binary(const sdk::OpCall& c) {
  expect_arity(c, 2, 1);
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, c.in[0], out.dtype, "input 0");
  expect_dtype(c, c.in[1], out.dtype, "input 1");
  NdIter it(out);
  const int o = it.add(out.strides);
  const int ia = it.add_broadcast(c.in[0], c.op);
  const int ib = it.add_broadcast(c.in[1], c.op);
  visit_num(c, out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* a = sdk::data_ptr<const T>(c.in[0]);
    const T* b = sdk::data_ptr<const T>(c.in[1]);
    T* dst = sdk::data_ptr<T>(out);
    for (; !it.done(); it.next()) dst[it[o]] = convert<T>(apply<C>(c.op, convert<C>(a[it[ia]]), convert<C>(b[it[ib]])));
  });
}

void run_add_relu_bwd(const sdk::OpCall& c) {
  expect_arity(c, 3, 1);
  const ingot_tensor_desc& out = c.out[0];
  for (int i = 0; i < 3; ++i) {
    expect_dtype(c, c.in[i], out.dtype, "input");
    expect_same_shape(c, c.in[i], out, "input", "output");
  }
  NdIter it(out);
  const int o = it.add(out.strides);
  const int ia = it.add(c.in[0].strides);
  const int ib = it.add(c.in[1].strides);
  const int iy = it.add(c.in[2].strides);
  visit_float(c, out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    const T* a = sdk::data_ptr<const T>(c.in[0]);
    const T* b = sdk::data_ptr<const T>(c.in[1]);
    const T* y = sdk::data_ptr<const T>(c.in[2]);
    T* dst = sdk::data_ptr<T>(out);
    for (; !it.done(); it.next()) {
      // ADD rounds the sum to T, then RELU_BWD selects it
      const T sum = convert<T>(convert<C>(a[it[ia]]) + convert<C>(b[it[ib]]));
      dst[it[o]] = convert<C>(y[it[iy]]) > C(0) ? sum : convert<T>(C(0));
    }
  });
}

}  // namespace ingot::reference
