// SOFTMAX / LOG_SOFTMAX along an axis (max-subtracted, in double) and their backward ops, which
// take (y, grad_y): softmax gx = y * (gy - sum(gy * y)); log_softmax gx = gy - exp(y) * sum(gy).
#include <cmath>
#include <limits>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dtype_dispatch.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

void forward_lane(int32_t op, const std::vector<double>& x, std::vector<double>& y) {
  double max = -std::numeric_limits<double>::infinity();
  for (double v : x) max = std::isnan(v) || v > max ? v : max;
  if (std::isinf(max) && max < 0) max = 0.0;  // all -inf: avoid inf - inf
  double sum = 0.0;
  for (double v : x) sum += std::exp(v - max);
  for (size_t j = 0; j < x.size(); ++j) {
    y[j] = op == INGOT_OP_SOFTMAX ? std::exp(x[j] - max) / sum : x[j] - max - std::log(sum);
  }
}

void backward_lane(int32_t op, const std::vector<double>& y, const std::vector<double>& gy, std::vector<double>& gx) {
  double sum = 0.0;
  for (size_t j = 0; j < y.size(); ++j) sum += op == INGOT_OP_SOFTMAX_BWD ? gy[j] * y[j] : gy[j];
  for (size_t j = 0; j < y.size(); ++j) {
    gx[j] = op == INGOT_OP_SOFTMAX_BWD ? y[j] * (gy[j] - sum) : gy[j] - std::exp(y[j]) * sum;
  }
}

}  // namespace

void run_softmax(const sdk::OpCall& c) {
  const bool backward = c.op == INGOT_OP_SOFTMAX_BWD || c.op == INGOT_OP_LOG_SOFTMAX_BWD;
  expect_arity(c, backward ? 2 : 1, 1);
  const ingot_tensor_desc& out = c.out[0];
  for (int i = 0; i < c.n_in; ++i) {
    expect_dtype(c, c.in[i], out.dtype, "input");
    expect_same_shape(c, c.in[i], out, "input", "output");
  }
  const int axis = wrap_axis(c, sdk::attr<ingot_attr_axis>(c.attrs).axis, out.ndim);
  const auto n = static_cast<size_t>(lane_size(out, axis));
  std::vector<double> a(n), b(n), r(n);
  NdIter it = lane_iter(out, axis);
  const int io = it.add(out.strides);
  const int i0 = it.add(c.in[0].strides);
  const int i1 = backward ? it.add(c.in[1].strides) : i0;
  const void* p0 = sdk::data_ptr(c.in[0]);
  const void* p1 = backward ? sdk::data_ptr(c.in[1]) : p0;
  void* dst = sdk::data_ptr(out);
  const int64_t s0 = lane_stride(c.in[0], axis);
  const int64_t s1 = backward ? lane_stride(c.in[1], axis) : s0;
  const int64_t so = lane_stride(out, axis);
  for (; !it.done(); it.next()) {
    for (size_t j = 0; j < n; ++j) {
      a[j] = load_as<double>(p0, c.in[0].dtype, it[i0] + static_cast<int64_t>(j) * s0);
      b[j] = load_as<double>(p1, out.dtype, it[i1] + static_cast<int64_t>(j) * s1);
    }
    if (backward) {
      backward_lane(c.op, a, b, r);
    } else {
      forward_lane(c.op, a, r);
    }
    for (size_t j = 0; j < n; ++j) store_as<double>(dst, out.dtype, it[io] + static_cast<int64_t>(j) * so, r[j]);
  }
}

}  // namespace ingot::reference
