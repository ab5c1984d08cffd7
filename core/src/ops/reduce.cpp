// Reductions: the op reduces its input to an output of the same rank with reduced dims = 1
// (op_table.def); keepdim=false is a reshape afterwards.
#include "ingot/ops/reduce.h"

#include "ingot/runtime/op_info.h"
#include "ops/op_util.h"

namespace ingot {

namespace {

/// Output shape with the input's rank (reduced dims = 1) and the keepdim=false shape.
struct ReducedShapes {
  Shape kept;
  Shape squeezed;
};

ReducedShapes reduced_shapes(const char* op, const Shape& in, const std::vector<int64_t>& dims) {
  ReducedShapes r{in, {}};
  bool reduce[Shape::kMaxDims] = {};
  if (dims.empty()) {
    for (int d = 0; d < in.size(); ++d) reduce[d] = true;
  }
  for (int64_t d : dims) {
    const int a = detail::axis_for(op, d, in.size());
    if (in.size() == 0) continue;  // a 0-dim tensor: dim 0 / -1 means "all", like torch
    INGOT_CHECK_SHAPE(!reduce[a], "{}: dim {} appears twice in the reduced dims of {}", op, a, in.str());
    reduce[a] = true;
  }
  for (int d = 0; d < in.size(); ++d) {
    if (reduce[d]) {
      r.kept[d] = 1;
    } else {
      r.squeezed.push_back(in[d]);
    }
  }
  return r;
}

Tensor reduce(OpKind op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, DType out) {
  const char* name = op_info(op).name;
  detail::check_defined(x, name, "input");
  detail::check_op_dtype(op, x.dtype());
  const ReducedShapes shapes = reduced_shapes(name, x.shape(), dims);
  if (op == INGOT_OP_MAX || op == INGOT_OP_MIN) {
    for (int d = 0; d < x.dim(); ++d) {
      INGOT_CHECK_SHAPE(x.shape()[d] > 0 || shapes.kept[d] == 0, "{}: reducing over the empty dim {} of {}", name, d,
                        x.shape().str());
    }
  }
  Tensor y = detail::run1(op, {x}, shapes.kept, out);
  return keepdim ? y : y.reshape(shapes.squeezed);
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  detail::check_defined(x, "sum", "input");
  const Tensor xin = is_floating(x.dtype()) ? x : x.to(DType::I64);
  return reduce(INGOT_OP_SUM, xin, dims, keepdim, xin.dtype());
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  detail::check_defined(x, "mean", "input");
  INGOT_CHECK_AS(is_floating(x.dtype()), DTypeError,
                 "mean: input of dtype {} is not floating; cast it first (x.to(DType::F32))", dtype_name(x.dtype()));
  return reduce(INGOT_OP_MEAN, x, dims, keepdim, x.dtype());
}

Tensor max(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  detail::check_defined(x, "max", "input");
  return reduce(INGOT_OP_MAX, x, dims, keepdim, x.dtype());
}

Tensor min(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  detail::check_defined(x, "min", "input");
  return reduce(INGOT_OP_MIN, x, dims, keepdim, x.dtype());
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  detail::check_defined(x, "argmax", "input");
  detail::check_op_dtype(INGOT_OP_ARGMAX, x.dtype());
  INGOT_CHECK_SHAPE(x.numel() > 0, "argmax: input {} is empty", x.shape().str());
  if (!dim) {
    const Tensor flat = x.reshape(Shape{x.numel()});
    const Tensor i = argmax(flat, 0, false);
    return keepdim ? i.reshape(Shape(std::vector<int64_t>(x.dim(), 1))) : i;
  }
  const int a = detail::axis_for("argmax", *dim, x.dim());
  if (x.dim() == 0) return argmax(x.reshape(Shape{1}), 0, false).reshape(Shape{});
  auto attr = make_attr<ingot_attr_axis>();
  attr.axis = a;
  const ReducedShapes shapes = reduced_shapes("argmax", x.shape(), {a});
  Tensor y = detail::run1(INGOT_OP_ARGMAX, {x}, shapes.kept, DType::I64, &attr);
  return keepdim ? y : y.reshape(shapes.squeezed);
}

Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  detail::check_defined(x, "sum_to_shape", "input");
  if (x.shape() == shape) return x;
  const Shape& in = x.shape();
  INGOT_CHECK_SHAPE(shape.size() <= in.size(), "sum_to_shape: cannot sum {} to the larger rank {}", in.str(),
                    shape.str());
  Shape kept = in;
  const int lead = in.size() - shape.size();
  for (int d = 0; d < in.size(); ++d) {
    if (d < lead) {
      kept[d] = 1;
      continue;
    }
    const int64_t t = shape[d - lead];
    INGOT_CHECK_SHAPE(t == in[d] || t == 1, "sum_to_shape: {} does not broadcast to {} (dim {}: {} vs {})", shape.str(),
                      in.str(), d, t, in[d]);
    kept[d] = t;
  }
  const Tensor xin = is_floating(x.dtype()) ? x : x.to(DType::I64);
  detail::check_op_dtype(INGOT_OP_SUM, xin.dtype());
  return detail::run1(INGOT_OP_SUM, {xin}, kept, xin.dtype()).reshape(shape);
}

}  // namespace ingot
