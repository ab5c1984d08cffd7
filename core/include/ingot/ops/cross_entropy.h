// The fused per-row cross-entropy on the CROSS_ENTROPY op: one log-sum-exp per row is all that
// backward keeps, so a [N, C] loss over a large vocabulary holds no second [N, C] matrix.
#pragma once

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

struct CrossEntropyRows {
  Tensor loss;  ///< [N], the logits' dtype: 0 where the target is ignore_index
  Tensor lse;   ///< [N], f32 (f64 for f64)
};

/// logits [N, C], target int64 [N] in [0, C) or ignore_index -> per-row loss (torch's
/// cross_entropy with reduction 'none' and label_smoothing). Differentiable in the logits.
CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, int64_t ignore_index = -100,
                                    double label_smoothing = 0.0);
/// The backward op: d loss / d logits from grad_loss [N].
Tensor cross_entropy_rows_backward(const Tensor& grad_loss, const Tensor& logits, const Tensor& target,
                                   const Tensor& lse, const ingot_attr_cross_entropy& attr);

}  // namespace ingot
