// Elementwise ops: unary math, binary arithmetic and comparisons with PyTorch's type promotion
// and NumPy broadcasting, tensor-scalar forms, where, and the arithmetic operators.
#pragma once

#include <optional>
#include <type_traits>

#include "ingot/tensor/tensor.h"

namespace ingot {

/// A C++ number taking part in a tensor-scalar op. Like a Python scalar it raises the tensor's
/// dtype category, never its width: int64 + 2.5 -> float32, int64 + 1 -> int64,
/// float16 * 2 -> float16, bool + 1 -> int64 (torch.result_type).
struct Scalar {
  double value;
  ScalarKind kind;
  template <class T>
  requires std::is_arithmetic_v<T> Scalar(
      T v)  // NOLINT(google-explicit-constructor): numbers convert implicitly, as in torch
      : value(static_cast<double>(v)),
        kind(std::is_same_v<T, bool>       ? ScalarKind::Bool
             : std::is_floating_point_v<T> ? ScalarKind::Floating
                                           : ScalarKind::Integral) {}
};

// ---- unary: float ops promote integer and bool inputs to float32, like torch ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
/// Gradient of relu: `grad` where x > 0, else 0 (x may be relu's input or its output). Same
/// shapes; one pass in whatever layout the backend keeps both in.
Tensor relu_backward(const Tensor& grad, const Tensor& x);
/// Gradient of gelu (erf form, or tanh form when `tanh`) at its input x: grad * gelu'(x). Same
/// shapes; one pass.
Tensor gelu_backward(const Tensor& grad, const Tensor& x, bool tanh = false);
/// GELU, erf form (PyTorch's default).
Tensor gelu(const Tensor& x);
/// GELU, tanh form: torch's gelu(approximate='tanh'), GPT-2's activation.
Tensor gelu_tanh(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor sign(const Tensor& x);
/// floor / ceil / round of an integer tensor return a copy (the values are already integral).
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
/// Rounds half to even, like torch.round.
Tensor round(const Tensor& x);
Tensor reciprocal(const Tensor& x);
/// Output bool.
Tensor logical_not(const Tensor& x);
/// log(1 + exp(beta x)) / beta, and x where beta x > threshold.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
/// Clamps to [min, max]; either bound may be absent. An integer tensor with a fractional bound
/// is promoted to float32.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);

// ---- binary, broadcasting. Comparisons and logical ops output bool; div and pow of integers
// promote to float32 (true division). bool+bool is logical or and bool*bool logical and, like torch.
#define INGOT_DECLARE_BINARY(name)               \
  Tensor name(const Tensor& a, const Tensor& b); \
  Tensor name(const Tensor& a, Scalar b);        \
  Tensor name(Scalar a, const Tensor& b);
INGOT_DECLARE_BINARY(add)
INGOT_DECLARE_BINARY(sub)
INGOT_DECLARE_BINARY(mul)
INGOT_DECLARE_BINARY(div)
INGOT_DECLARE_BINARY(pow)
INGOT_DECLARE_BINARY(maximum)
INGOT_DECLARE_BINARY(minimum)
INGOT_DECLARE_BINARY(eq)
INGOT_DECLARE_BINARY(ne)
INGOT_DECLARE_BINARY(lt)
INGOT_DECLARE_BINARY(le)
INGOT_DECLARE_BINARY(gt)
INGOT_DECLARE_BINARY(ge)
INGOT_DECLARE_BINARY(logical_and)
INGOT_DECLARE_BINARY(logical_or)
#undef INGOT_DECLARE_BINARY

/// cond ? a : b, broadcasting all three; cond is cast to bool, a and b promoted together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);

// ---- operators ----
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
inline Tensor operator+(Scalar a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
inline Tensor operator-(Scalar a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
inline Tensor operator*(Scalar a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
inline Tensor operator/(Scalar a, const Tensor& b) { return div(a, b); }

}  // namespace ingot
