// Matrix products (matmul with torch.matmul's 1-D and batch rules, linear, fused epilogues) and
// 2-D convolution with its two backward ops.
#pragma once

#include <array>
#include <cstdint>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// Activation fused after a matmul or convolution.
enum class Activation : int32_t {
  None = INGOT_ACT_NONE,
  Relu = INGOT_ACT_RELU,
  Gelu = INGOT_ACT_GELU,
  GeluTanh = INGOT_ACT_GELU_TANH,
  Relu6 = INGOT_ACT_RELU6
};

/// torch.matmul: 1-D operands are promoted to matrices and the added dim removed afterwards;
/// batch dims broadcast. Floating dtypes only.
Tensor matmul(const Tensor& a, const Tensor& b);
/// matmul with a fused epilogue: + bias ([N], optional: pass an undefined tensor) then activation.
Tensor matmul_ex(const Tensor& a, const Tensor& b, const Tensor& bias, Activation activation = Activation::None);
/// x @ w^T + bias, as torch.nn.functional.linear: w is [out, in] (transposed as a view, no copy).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias = Tensor());

/// Parameters of a 2-D convolution (NCHW input, OIHW weight).
struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

/// Output [N, O, H_out, W_out] with H_out = (H + 2 pad - dilation (k - 1) - 1) / stride + 1.
Shape conv2d_output_shape(const Shape& x, const Shape& w, const Conv2dParams& p);
/// torch.nn.functional.conv2d with an optional bias [O] and a fused activation.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias = Tensor(), const Conv2dParams& p = {},
              Activation activation = Activation::None);
/// Gradient of conv2d with respect to its input, of shape `x_shape`.
Tensor conv2d_backward_data(const Tensor& grad_y, const Tensor& w, const Shape& x_shape, const Conv2dParams& p);
/// Gradient of conv2d with respect to its weight, of shape `w_shape`.
Tensor conv2d_backward_weight(const Tensor& x, const Tensor& grad_y, const Shape& w_shape, const Conv2dParams& p);

/// The ABI attribute struct of a convolution (shared with the gradient rules).
ingot_attr_conv2d conv2d_attr(const Conv2dParams& p, bool has_bias, Activation activation);
/// The parameters stored in an ABI attribute struct.
Conv2dParams conv2d_params(const ingot_attr_conv2d& attr);

}  // namespace ingot
