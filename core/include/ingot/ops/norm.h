// Normalisation ops: softmax / log_softmax and their backward ops, layer norm and batch norm
// with the statistics their backward ops reuse.
#pragma once

#include <cstdint>

#include "ingot/tensor/tensor.h"

namespace ingot {

Tensor softmax(const Tensor& x, int64_t axis);
Tensor log_softmax(const Tensor& x, int64_t axis);
/// Gradient of softmax from its output y: y * (grad_y - sum(grad_y * y, axis)).
Tensor softmax_backward(const Tensor& y, const Tensor& grad_y, int64_t axis);
/// Gradient of log_softmax from its output y: grad_y - exp(y) * sum(grad_y, axis).
Tensor log_softmax_backward(const Tensor& y, const Tensor& grad_y, int64_t axis);

/// y and the per-row statistics; mean and rstd have x's rank with the normalized dims = 1
/// (float32 for half-precision x, else x's dtype).
struct LayerNormResult {
  Tensor y;
  Tensor mean;
  Tensor rstd;
};
/// Gradients of a norm with respect to x, weight and bias (a missing weight counts as ones).
struct NormGrads {
  Tensor grad_x;
  Tensor grad_weight;
  Tensor grad_bias;
};

/// torch.nn.functional.layer_norm over the trailing `normalized_shape`; weight and bias are
/// optional (undefined tensors).
LayerNormResult layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                           const Tensor& bias = Tensor(), double eps = 1e-5);
NormGrads layer_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                              const Tensor& weight, const Shape& normalized_shape, double eps = 1e-5);

/// y and the batch statistics over (N, H, W, ...) per channel (dim 1), shape [C].
struct BatchNormResult {
  Tensor y;
  Tensor save_mean;
  Tensor save_invstd;
};
/// torch.nn.functional.batch_norm: in training, normalises with the batch statistics and
/// updates running_mean / running_var in place (unbiased variance); in eval, uses the running
/// statistics. weight, bias and the running statistics are optional (undefined tensors).
BatchNormResult batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, bool training, double momentum = 0.1, double eps = 1e-5);
NormGrads batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                              const Tensor& save_invstd, bool training, double eps = 1e-5);

}  // namespace ingot
