// 2-D pooling (NCHW): max pooling with its index workspace, average pooling, their backward
// ops, and adaptive average pooling.
#pragma once

#include <array>
#include <cstdint>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// Parameters of max_pool2d / avg_pool2d (PyTorch's defaults; stride 0 = the kernel size).
struct Pool2dParams {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{0, 0};
  std::array<int64_t, 2> padding{0, 0};
  bool ceil_mode = false;
  bool count_include_pad = true;  ///< average pooling only
};

/// y and the workspace its backward needs: int64 indices, within each H*W input plane, of
/// the maximum that produced each output element (like torch's return_indices).
struct MaxPool2dResult {
  Tensor y;
  Tensor workspace;
};

/// Output [N, C, H_out, W_out] under PyTorch's rules (ceil_mode windows must start inside the
/// input or its left padding).
Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p);
MaxPool2dResult max_pool2d(const Tensor& x, const Pool2dParams& p);
/// max_pool2d's values only. When no graph is recorded (grad mode off, or x needs no grad) the
/// backend may skip the indices (oneDNN's inference pooling); otherwise it is max_pool2d(x, p).y.
/// Also takes u8 / i8 tensors (quantized values: max pooling commutes with quantization).
Tensor max_pool2d_values(const Tensor& x, const Pool2dParams& p);
Tensor max_pool2d_backward(const Tensor& grad_y, const Tensor& x, const Tensor& workspace, const Pool2dParams& p);
Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p);
Tensor avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape, const Pool2dParams& p);
/// torch's adaptive_avg_pool2d: one pooling op when H and W divide evenly, else the mean of
/// each window (start floor(i H / out), end ceil((i + 1) H / out)).
Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> out_hw);

/// The ABI attribute struct of a pooling op, with the default stride resolved.
ingot_attr_pool2d pool2d_attr(const Pool2dParams& p);
Pool2dParams pool2d_params(const ingot_attr_pool2d& attr);

}  // namespace ingot
