// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_): rescales or clamps the
// .grad of parameters in place; parameters without a gradient are ignored.
#pragma once

#include <limits>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::optim {

/// The total `norm_type`-norm of every gradient taken together (2 = one fused GLOBAL_NORM; inf =
/// largest |g|); when it exceeds max_norm the gradients are multiplied in place by
/// max_norm / (norm + 1e-6), like torch. Returns the norm before clipping (0 without gradients).
/// error_if_nonfinite: throw when the norm is NaN or inf instead of scaling by NaN.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient element to [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

/// norm_type for the infinity norm.
inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

}  // namespace ingot::optim
