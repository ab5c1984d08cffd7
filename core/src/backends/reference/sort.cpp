// SORT and TOPK along an axis: values and i64 indices, ordered by a stable sort in which NaN is
// the largest value (torch); TOPK keeps the first k of the sorted lane (always sorted, ties
// broken by the lower index).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

template <class K>
bool is_nan(K v) {
  if constexpr (std::is_floating_point_v<K>)
    return std::isnan(v);
  else
    return false;
}

// K is the sort key: double for floating point, int64 for integers (exact for every dtype).
template <class K>
void sort_lanes(const sdk::OpCall& c, int axis, bool descending, int64_t k) {
  const ingot_tensor_desc& in = c.in[0];
  const ingot_tensor_desc& values = c.out[0];
  const ingot_tensor_desc& indices = c.out[1];
  const int64_t n = lane_size(in, axis);
  const int64_t in_step = lane_stride(in, axis);
  const int64_t val_step = lane_stride(values, axis);
  const int64_t idx_step = lane_stride(indices, axis);
  const int64_t size = sdk::dtype_size(in.dtype);
  const char* src = sdk::data_ptr<const char>(in);
  char* val = sdk::data_ptr<char>(values);
  int64_t* idx = sdk::data_ptr<int64_t>(indices);
  std::vector<K> keys(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  const auto before = [&](int64_t a, int64_t b) {
    const K x = keys[a], y = keys[b];
    if (descending) return (is_nan(x) && !is_nan(y)) || x > y;
    return (!is_nan(x) && is_nan(y)) || x < y;
  };
  NdIter it = lane_iter(in, axis);
  const int ii = it.add(in.strides);
  const int iv = it.add(values.strides);
  const int ix = it.add(indices.strides);
  for (; !it.done(); it.next()) {
    for (int64_t j = 0; j < n; ++j) keys[j] = load_as<K>(src, in.dtype, it[ii] + j * in_step);
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), before);
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(val + (it[iv] + j * val_step) * size, src + (it[ii] + order[j] * in_step) * size,
                  static_cast<size_t>(size));
      idx[it[ix] + j * idx_step] = order[j];
    }
  }
}

void check_outputs(const sdk::OpCall& c, int axis, int64_t k) {
  const ingot_tensor_desc& in = c.in[0];
  expect_dtype(c, c.out[0], in.dtype, "values");
  expect_dtype(c, c.out[1], INGOT_I64, "indices");
  for (int o = 0; o < 2; ++o) {
    bool fits = c.out[o].ndim == in.ndim;
    for (int d = 0; fits && d < in.ndim; ++d) fits = c.out[o].shape[d] == (d == axis ? k : in.shape[d]);
    if (!fits)
      fail("{}: output {} does not fit input {} with {} along axis {}", op_name(c.op), shape_str(c.out[o]),
           shape_str(in), k, axis);
  }
}

void run_sorted(const sdk::OpCall& c, int axis, bool descending, int64_t k) {
  if (is_float_dtype(c.in[0].dtype)) {
    sort_lanes<double>(c, axis, descending, k);
  } else {
    sort_lanes<int64_t>(c, axis, descending, k);
  }
}

}  // namespace

void run_sort(const sdk::OpCall& c) {
  expect_arity(c, 1, 2);
  const auto& a = sdk::attr<ingot_attr_sort>(c.attrs);
  const int axis = wrap_axis(c, a.axis, c.in[0].ndim);
  const int64_t n = lane_size(c.in[0], axis);
  check_outputs(c, axis, n);
  run_sorted(c, axis, a.descending != 0, n);  // always stable: a valid answer for stable == 0 too
}

void run_topk(const sdk::OpCall& c) {
  expect_arity(c, 1, 2);
  const auto& a = sdk::attr<ingot_attr_topk>(c.attrs);
  const int axis = wrap_axis(c, a.axis, c.in[0].ndim);
  const int64_t n = lane_size(c.in[0], axis);
  if (a.k < 0 || a.k > n) fail("topk: k = {} out of range for a dim of size {} in {}", a.k, n, shape_str(c.in[0]));
  check_outputs(c, axis, a.k);
  run_sorted(c, axis, a.largest != 0, a.k);
}

}  // namespace ingot::reference
