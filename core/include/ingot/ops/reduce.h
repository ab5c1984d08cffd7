// Reductions (sum, mean, max, min, argmax) over chosen dims, and sum_to_shape, the reduction
// that undoes broadcasting (the gradient of every broadcasting op).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot {

/// Sum over `dims` (empty = all dims). Integer and bool inputs sum in int64, like torch.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Mean over `dims` (empty = all); floating inputs only.
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Maximum values over `dims` (empty = all), like torch.amax.
Tensor max(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Minimum values over `dims` (empty = all), like torch.amin.
Tensor min(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Index (int64) of the first maximum along `dim`; without a dim, over the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
/// Sums `x` down to `shape`, which must broadcast to x's shape: leading extra dims are summed
/// away and dims where `shape` has 1 are summed with keepdim. Returns x itself when equal.
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace ingot
