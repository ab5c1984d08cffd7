// Shape and indexing ops: shape inference and checks, then one dispatch each.
#include "ingot/ops/indexing.h"

#include <algorithm>

#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

Tensor index_tensor(const char* op, const Tensor& index) {
  detail::check_defined(index, op, "index");
  INGOT_CHECK_AS(is_integral(index.dtype()), DTypeError, "{}: index must be an integer tensor, got {}", op,
                 dtype_name(index.dtype()));
  return index.to(DType::I64);
}

ingot_attr_axis axis_attr(int axis) {
  auto attr = make_attr<ingot_attr_axis>();
  attr.axis = axis;
  return attr;
}

/// torch.gather / scatter_add rule: same rank, index.size(d) <= x.size(d) for d != axis.
void check_index_shape(const char* op, const Shape& x, const Shape& index, int axis) {
  INGOT_CHECK_SHAPE(x.size() == index.size(), "{}: index {} must have the rank of the input {}", op, index.str(),
                    x.str());
  for (int d = 0; d < x.size(); ++d) {
    INGOT_CHECK_SHAPE(d == axis || index[d] <= x[d], "{}: index {} is larger than the input {} in dim {}", op,
                      index.str(), x.str(), d);
  }
}

}  // namespace

Tensor concat(const std::vector<Tensor>& tensors, int64_t axis) {
  INGOT_CHECK_SHAPE(!tensors.empty(), "concat: needs at least one tensor");
  for (const Tensor& t : tensors) detail::check_defined(t, "concat", "input");
  const Shape& first = tensors.front().shape();
  const int a = detail::axis_for("concat", axis, first.size());
  INGOT_CHECK_SHAPE(first.size() > 0, "concat: cannot concatenate 0-dim tensors");
  Shape out = first;
  out[a] = 0;
  DType t = tensors.front().dtype();
  for (const Tensor& x : tensors) {
    bool same = x.dim() == first.size();
    for (int d = 0; same && d < first.size(); ++d) same = d == a || x.shape()[d] == first[d];
    INGOT_CHECK_SHAPE(same, "concat: {} and {} differ outside axis {}", first.str(), x.shape().str(), a);
    out[a] += x.shape()[a];
    t = promote_types(t, x.dtype());
  }
  std::vector<Tensor> inputs;
  for (const Tensor& x : tensors) inputs.push_back(x.to(t));
  const auto attr = axis_attr(a);
  return detail::run1(INGOT_OP_CONCAT, inputs, out, t, &attr);
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, double value) {
  detail::check_defined(x, "pad", "input");
  INGOT_CHECK_SHAPE(pads.size() % 2 == 0 && static_cast<int>(pads.size()) <= 2 * x.dim(),
                    "pad: {} pad values for a {}-d input {} (need an even count, at most 2 per dim)", pads.size(),
                    x.dim(), x.shape().str());
  auto attr = make_attr<ingot_attr_pad>();
  attr.value = value;
  Tensor src = x;
  Shape out = x.shape();
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    const int d = x.dim() - 1 - static_cast<int>(i);
    const int64_t before = pads[2 * i], after = pads[2 * i + 1];
    const int64_t cropped = x.shape()[d] + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
    INGOT_CHECK_SHAPE(cropped >= 0, "pad: pads ({}, {}) crop dim {} of {} below zero", before, after, d,
                      x.shape().str());
    src = src.slice(d, -std::min<int64_t>(before, 0), x.shape()[d] + std::min<int64_t>(after, 0));
    attr.pads[2 * d] = std::max<int64_t>(before, 0);
    attr.pads[2 * d + 1] = std::max<int64_t>(after, 0);
    out[d] = x.shape()[d] + before + after;
  }
  return detail::run1(INGOT_OP_PAD, {src}, out, x.dtype(), &attr);
}

Tensor gather(const Tensor& x, int64_t axis, const Tensor& index) {
  detail::check_defined(x, "gather", "input");
  const Tensor idx = index_tensor("gather", index);
  const int a = detail::axis_for("gather", axis, x.dim());
  check_index_shape("gather", x.shape(), idx.shape(), a);
  const auto attr = axis_attr(a);
  return detail::run1(INGOT_OP_GATHER, {x, idx}, idx.shape(), x.dtype(), &attr);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index) {
  detail::check_defined(x, "index_select", "input");
  const Tensor idx = index_tensor("index_select", index);
  INGOT_CHECK_SHAPE(idx.dim() <= 1, "index_select: index {} must be 1-D", idx.shape().str());
  const int a = detail::axis_for("index_select", axis, x.dim());
  Shape out = x.shape();
  if (out.size() > 0) out[a] = idx.numel();
  const auto attr = axis_attr(a);
  return detail::run1(INGOT_OP_INDEX_SELECT, {x, idx.reshape(Shape{idx.numel()})}, out, x.dtype(), &attr);
}

Tensor scatter_add(const Tensor& self, int64_t axis, const Tensor& index, const Tensor& src) {
  detail::check_defined(self, "scatter_add", "input");
  detail::check_defined(src, "scatter_add", "src");
  const Tensor idx = index_tensor("scatter_add", index);
  const int a = detail::axis_for("scatter_add", axis, self.dim());
  check_index_shape("scatter_add", self.shape(), idx.shape(), a);
  check_index_shape("scatter_add", src.shape(), idx.shape(), -1);
  detail::check_op_dtype(INGOT_OP_SCATTER_ADD, self.dtype());
  const auto attr = axis_attr(a);
  return detail::run1(INGOT_OP_SCATTER_ADD, {self, idx, src.to(self.dtype())}, self.shape(), self.dtype(), &attr);
}

SortResult sort(const Tensor& x, int64_t axis, bool descending, bool stable) {
  detail::check_defined(x, "sort", "input");
  detail::check_op_dtype(INGOT_OP_SORT, x.dtype());
  auto attr = make_attr<ingot_attr_sort>();
  attr.axis = detail::axis_for("sort", axis, x.dim());
  attr.descending = descending;
  attr.stable = stable;
  auto ys = run_op(INGOT_OP_SORT, {x}, {OutputSpec{x.shape(), x.dtype()}, OutputSpec{x.shape(), DType::I64}}, &attr,
                   x.device());
  return {ys[0], ys[1]};
}

SortResult topk(const Tensor& x, int64_t k, int64_t axis, bool largest, bool sorted) {
  detail::check_defined(x, "topk", "input");
  detail::check_op_dtype(INGOT_OP_TOPK, x.dtype());
  auto attr = make_attr<ingot_attr_topk>();
  attr.axis = detail::axis_for("topk", axis, x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[attr.axis];
  INGOT_CHECK_SHAPE(k >= 0 && k <= n, "topk: k = {} out of range for dim {} of {}", k, attr.axis, x.shape().str());
  attr.k = k;
  attr.largest = largest;
  attr.sorted = sorted;
  Shape out = x.shape();
  if (out.size() > 0) out[attr.axis] = k;
  auto ys = run_op(INGOT_OP_TOPK, {x}, {OutputSpec{out, x.dtype()}, OutputSpec{out, DType::I64}}, &attr, x.device());
  return {ys[0], ys[1]};
}

}  // namespace ingot
