// MATMUL: a [..., M, K] x b [..., K, N] (+ bias [N]) -> [..., M, N] with broadcast batch dims
// and a fused relu / gelu post-op; straightforward triple loop accumulating in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"
#include "backends/reference/strided_iter.h"

namespace ingot::reference {

namespace {

// The leading (batch) dims of `t` with row-major dense strides, for broadcasting batch indices.
ingot_tensor_desc batch_part(const ingot_tensor_desc& t) {
  ingot_tensor_desc b = t;
  int64_t dense[INGOT_MAX_DIMS] = {};
  dense_strides(t, dense);
  b.ndim = t.ndim - 2;
  for (int i = 0; i < b.ndim; ++i) b.strides[i] = dense[i];
  return b;
}

}  // namespace

double apply_activation(int32_t activation, double x) {
  switch (activation) {
    case INGOT_ACT_NONE:
      return x;
    case INGOT_ACT_RELU:
      return x > 0.0 || std::isnan(x) ? x : 0.0;
    case INGOT_ACT_GELU:
      return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440));
    case INGOT_ACT_GELU_TANH:
      return 0.5 * x * (1.0 + std::tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case INGOT_ACT_RELU6:
      return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0);
    default:
      fail("reference: unknown activation {}", activation);
  }
}

void run_matmul(const sdk::OpCall& c) {
  const auto& attr = sdk::attr<ingot_attr_matmul>(c.attrs);
  expect_arity(c, attr.has_bias ? 3 : 2, 1);
  const ingot_tensor_desc& a = c.in[0];
  const ingot_tensor_desc& b = c.in[1];
  const ingot_tensor_desc& out = c.out[0];
  expect_dtype(c, b, a.dtype, "b");
  expect_dtype(c, out, a.dtype, "output");
  if (a.ndim < 2 || b.ndim < 2) fail("matmul: a {} and b {} must be at least 2-d", shape_str(a), shape_str(b));
  const int64_t m = a.shape[a.ndim - 2];
  const int64_t k = a.shape[a.ndim - 1];
  const int64_t n = b.shape[b.ndim - 1];
  const int nb = out.ndim - 2;
  if (b.shape[b.ndim - 2] != k || out.ndim != std::max(a.ndim, b.ndim) || out.shape[nb] != m ||
      out.shape[nb + 1] != n) {
    fail("matmul: a {} x b {} does not give output {}", shape_str(a), shape_str(b), shape_str(out));
  }
  std::vector<double> bias;
  if (attr.has_bias) {
    bias = read_f64(c.in[2]);
    if (static_cast<int64_t>(bias.size()) != n) fail("matmul: bias {} for N = {}", shape_str(c.in[2]), n);
  }
  const std::vector<double> av = read_f64(a);
  const std::vector<double> bv = read_f64(b);
  std::vector<double> y(static_cast<size_t>(sdk::numel(out)), 0.0);

  NdIter batch(nb, out.shape);
  const int ia = batch.add_broadcast(batch_part(a), c.op);
  const int ib = batch.add_broadcast(batch_part(b), c.op);
  for (int64_t bi = 0; !batch.done(); batch.next(), ++bi) {
    const double* pa = av.data() + batch[ia];
    const double* pb = bv.data() + batch[ib];
    double* py = y.data() + bi * m * n;
    // Row by row, p outermost so that b is read along its rows; each y[i][j] still sums its
    // k products in ascending p.
    for (int64_t i = 0; i < m; ++i) {
      double* row = py + i * n;
      for (int64_t p = 0; p < k; ++p) {
        const double aip = pa[i * k + p];
        for (int64_t j = 0; j < n; ++j) row[j] += aip * pb[p * n + j];
      }
      if (attr.has_bias)
        for (int64_t j = 0; j < n; ++j) row[j] += bias[static_cast<size_t>(j)];
    }
  }
  activate_as_stored(c, out.dtype, attr.activation, y);
  write_f64(out, y);
}

}  // namespace ingot::reference
