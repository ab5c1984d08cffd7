// Shape and indexing ops: concat, constant pad, gather, index_select, scatter_add, sort, topk.
// Index tensors are int64 (other integer dtypes are converted).
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot {

/// Joins tensors along `axis`; other dims must match; dtypes are promoted together.
Tensor concat(const std::vector<Tensor>& tensors, int64_t axis);
/// Constant padding in torch.nn.functional.pad's order: (last dim before, last dim after,
/// previous dim before, ...). Negative pads crop, like torch.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, double value = 0.0);
/// out[i][j] = x[index[i][j]][j] for axis 0 (torch.gather); out has index's shape.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);
/// Picks the entries `index` (1-D) of `axis`.
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
/// A copy of `self` with src[i][j] added at [index[i][j]][j] for axis 0 (torch.scatter_add).
Tensor scatter_add(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src);

/// Sorted values and their int64 positions in the input.
struct SortResult {
  Tensor values;
  Tensor indices;
};
SortResult sort(const Tensor& x, int64_t axis = -1, bool descending = false, bool stable = false);
/// The k largest (or smallest) entries along `axis`.
SortResult topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true, bool sorted = true);

}  // namespace ingot
