// Reductions: SUM / MEAN / MAX / MIN reduce the input to the output's shape (right-aligned; each
// output dim is the input's or 1), accumulating in double (floats) or int64 (integers);
// ARGMAX along an axis returns the first maximum's index (NaN counts as the maximum, like torch).
#include <cmath>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

template <class A>
A combine(int32_t op, A acc, A v) {
  switch (op) {
    case INGOT_OP_SUM:
    case INGOT_OP_MEAN:
      return add_wrapping(acc, v);
    case INGOT_OP_MAX:
    case INGOT_OP_MIN:
      if constexpr (std::is_floating_point_v<A>) {
        if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<A>::quiet_NaN();
      }
      return op == INGOT_OP_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
    default:
      fail("{}: not a reduction", op_name(op));
  }
}

// A is the accumulator: double for floating-point inputs, int64 for integers.
template <class A>
void reduce_to_shape(const sdk::OpCall& c) {
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& out = c.out[0];
  // Row-major index into the output for every input index: dense strides, 0 on reduced dims.
  int64_t out_dense[INGOT_MAX_DIMS] = {};
  int64_t acc_strides[INGOT_MAX_DIMS] = {};
  int64_t s = 1;
  for (int j = out.ndim - 1; j >= 0; --j) {
    out_dense[j] = s;
    s *= out.shape[j];
  }
  const int lead = in.ndim - out.ndim;
  for (int j = 0; j < out.ndim; ++j) {
    if (out.shape[j] == in.shape[lead + j]) {
      acc_strides[lead + j] = out_dense[j];
    } else if (out.shape[j] != 1) {
      fail("{}: cannot reduce {} to {}", op_name(c.op), shape_str(in), shape_str(out));
    }
  }
  const int64_t n_out = sdk::numel(out);
  const int64_t count = n_out > 0 ? sdk::numel(in) / n_out : 0;
  if (count == 0 && n_out > 0 && (c.op == INGOT_OP_MAX || c.op == INGOT_OP_MIN)) {
    fail("{}: cannot reduce the empty tensor {} to {} (no identity)", op_name(c.op), shape_str(in), shape_str(out));
  }
  std::vector<A> acc(static_cast<size_t>(n_out), A(0));
  std::vector<bool> seen(static_cast<size_t>(n_out), false);
  const void* src = sdk::data_ptr(in);
  NdIter it(in);
  const int ii = it.add(in.strides);
  const int ia = it.add(acc_strides);
  for (; !it.done(); it.next()) {
    const A v = load_as<A>(src, in.dtype, it[ii]);
    const auto k = static_cast<size_t>(it[ia]);
    acc[k] = seen[k] ? combine<A>(c.op, acc[k], v) : v;
    seen[k] = true;
  }
  void* dst = sdk::data_ptr(out);
  NdIter ot(out);
  const int io = ot.add(out.strides);
  for (size_t k = 0; !ot.done(); ot.next(), ++k) {
    if (c.op == INGOT_OP_MEAN) {
      store_as<double>(dst, out.dtype, ot[io], static_cast<double>(acc[k]) / static_cast<double>(count));
    } else {
      store_as<A>(dst, out.dtype, ot[io], acc[k]);
    }
  }
}

template <class A>
void argmax_lanes(const sdk::OpCall& c, int axis, const int64_t* out_strides) {
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& out = c.out[0];
  const int64_t n = lane_size(in, axis);
  const int64_t step = lane_stride(in, axis);
  const void* src = sdk::data_ptr(in);
  int64_t* dst = sdk::data_ptr<int64_t>(out);
  NdIter it = lane_iter(in, axis);
  const int ii = it.add(in.strides);
  const int io = it.add(out_strides);
  for (; !it.done(); it.next()) {
    int64_t best_index = 0;
    A best = load_as<A>(src, in.dtype, it[ii]);
    for (int64_t j = 1; j < n; ++j) {
      if constexpr (std::is_floating_point_v<A>) {
        if (std::isnan(best)) break;
      }
      const A v = load_as<A>(src, in.dtype, it[ii] + j * step);
      bool better = v > best;
      if constexpr (std::is_floating_point_v<A>) better = better || std::isnan(v);
      if (better) {
        best = v;
        best_index = j;
      }
    }
    dst[it[io]] = best_index;
  }
}

}  // namespace

void run_reduce(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  const ingot_tensor_desc& in = c.in[0];
  if (c.out[0].ndim > in.ndim)
    fail("{}: output {} has more dims than input {}", op_name(c.op), shape_str(c.out[0]), shape_str(in));
  if (is_float_dtype(in.dtype)) {
    reduce_to_shape<double>(c);
  } else {
    reduce_to_shape<int64_t>(c);
  }
}

void run_argmax(const sdk::OpCall& c) {
  expect_arity(c, 1, 1);
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, out, INGOT_I64, "output");
  const int axis = wrap_axis(c, sdk::attr<ingot_attr_axis>(c.attrs).axis, in.ndim);
  if (lane_size(in, axis) == 0) fail("{}: cannot take the argmax of an empty dim of {}", op_name(c.op), shape_str(in));
  // The output either keeps the reduced dim as size 1 or drops it.
  int64_t out_strides[INGOT_MAX_DIMS] = {};
  bool ok = true;
  if (out.ndim == in.ndim) {
    for (int d = 0; d < in.ndim; ++d) {
      ok = ok && out.shape[d] == (d == axis ? 1 : in.shape[d]);
      out_strides[d] = d == axis ? 0 : out.strides[d];
    }
  } else if (out.ndim == in.ndim - 1) {
    for (int d = 0, j = 0; d < in.ndim; ++d) {
      if (d == axis) continue;
      ok = ok && out.shape[j] == in.shape[d];
      out_strides[d] = out.strides[j++];
    }
  } else {
    ok = false;
  }
  if (!ok)
    fail("{}: output {} does not fit input {} reduced along axis {}", op_name(c.op), shape_str(out), shape_str(in),
         axis);
  if (is_float_dtype(in.dtype)) {
    argmax_lanes<double>(c, axis, out_strides);
  } else {
    argmax_lanes<int64_t>(c, axis, out_strides);
  }
}

}  // namespace ingot::reference
