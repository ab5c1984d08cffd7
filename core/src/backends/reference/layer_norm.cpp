// LAYER_NORM (x, weight, bias) -> (y, mean, rstd) over the last normalized_ndim dims, biased
// variance, in double; LAYER_NORM_BWD (grad_y, x, mean, rstd, weight) -> (grad_x, grad_weight,
// grad_bias). Without affine, weight / bias / their gradients may be 0-size and are ignored.
#include <cmath>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

// x viewed as [outer, inner] with inner = the normalized dims.
struct Rows {
  int64_t outer, inner;
};

Rows rows_of(const sdk::OpCall& c, const ingot_tensor_desc& x, int normalized_ndim) {
  if (normalized_ndim < 1 || normalized_ndim > x.ndim) {
    fail("{}: normalized_ndim {} for input {}", op_name(c.op), normalized_ndim, shape_str(x));
  }
  Rows r{1, 1};
  for (int d = 0; d < x.ndim; ++d) (d < x.ndim - normalized_ndim ? r.outer : r.inner) *= x.shape[d];
  return r;
}

// An optional per-feature tensor: `count` values, or empty when absent (0-size or no affine).
std::vector<double> optional_values(const sdk::OpCall& c, const ingot_tensor_desc& d, int64_t count, bool use,
                                    const char* what) {
  if (!use || is_absent(d)) return {};
  if (sdk::numel(d) != count) fail("{}: {} {} should have {} elements", op_name(c.op), what, shape_str(d), count);
  return read_f64(d);
}

// Outputs that may be 0-size (not wanted) or must hold `count` values.
bool wanted(const sdk::OpCall& c, const ingot_tensor_desc& d, int64_t count, const char* what) {
  if (is_absent(d)) return false;
  if (sdk::numel(d) != count) fail("{}: {} {} should have {} elements", op_name(c.op), what, shape_str(d), count);
  return true;
}

}  // namespace

void run_layer_norm(const sdk::OpCall& c) {
  expect_arity(c, 3, 3);
  const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
  const ingot_tensor_desc& xd = c.in[0];
  expect_same_shape(c, xd, c.out[0], "x", "y");
  const Rows r = rows_of(c, xd, a.normalized_ndim);
  const std::vector<double> x = read_f64(xd);
  const std::vector<double> w = optional_values(c, c.in[1], r.inner, a.has_affine != 0, "weight");
  const std::vector<double> b = optional_values(c, c.in[2], r.inner, a.has_affine != 0, "bias");
  std::vector<double> y(x.size()), mean(static_cast<size_t>(r.outer)), rstd(static_cast<size_t>(r.outer));
  for (int64_t i = 0; i < r.outer; ++i) {
    const double* row = x.data() + i * r.inner;
    double sum = 0.0;
    for (int64_t j = 0; j < r.inner; ++j) sum += row[j];
    const double mu = sum / static_cast<double>(r.inner);
    double sq = 0.0;
    for (int64_t j = 0; j < r.inner; ++j) sq += (row[j] - mu) * (row[j] - mu);
    const double rs = 1.0 / std::sqrt(sq / static_cast<double>(r.inner) + a.eps);
    for (int64_t j = 0; j < r.inner; ++j) {
      double v = (row[j] - mu) * rs;
      if (!w.empty()) v *= w[j];
      if (!b.empty()) v += b[j];
      y[i * r.inner + j] = v;
    }
    mean[i] = mu;
    rstd[i] = rs;
  }
  write_f64(c.out[0], y);
  if (wanted(c, c.out[1], r.outer, "mean")) write_f64(c.out[1], mean);
  if (wanted(c, c.out[2], r.outer, "rstd")) write_f64(c.out[2], rstd);
}

void run_layer_norm_bwd(const sdk::OpCall& c) {
  expect_arity(c, 5, 3);
  const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
  const ingot_tensor_desc& xd = c.in[1];
  expect_same_shape(c, c.in[0], xd, "grad_y", "x");
  expect_same_shape(c, c.out[0], xd, "grad_x", "x");
  const Rows r = rows_of(c, xd, a.normalized_ndim);
  const std::vector<double> gy = read_f64(c.in[0]);
  const std::vector<double> x = read_f64(xd);
  const std::vector<double> mean = read_f64(c.in[2]);
  const std::vector<double> rstd = read_f64(c.in[3]);
  if (static_cast<int64_t>(mean.size()) != r.outer || static_cast<int64_t>(rstd.size()) != r.outer) {
    fail("layer_norm_bwd: mean {} and rstd {} should have {} elements", shape_str(c.in[2]), shape_str(c.in[3]),
         r.outer);
  }
  const std::vector<double> w = optional_values(c, c.in[4], r.inner, a.has_affine != 0, "weight");
  std::vector<double> gx(x.size()), gw(static_cast<size_t>(r.inner), 0.0), gb(static_cast<size_t>(r.inner), 0.0);
  const double inv_n = 1.0 / static_cast<double>(r.inner);
  for (int64_t i = 0; i < r.outer; ++i) {
    // gx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = gy * weight
    double sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t j = 0; j < r.inner; ++j) {
      const int64_t k = i * r.inner + j;
      const double xhat = (x[k] - mean[i]) * rstd[i];
      const double g = gy[k] * (w.empty() ? 1.0 : w[j]);
      sum_g += g;
      sum_g_xhat += g * xhat;
      gw[j] += gy[k] * xhat;
      gb[j] += gy[k];
    }
    for (int64_t j = 0; j < r.inner; ++j) {
      const int64_t k = i * r.inner + j;
      const double xhat = (x[k] - mean[i]) * rstd[i];
      const double g = gy[k] * (w.empty() ? 1.0 : w[j]);
      gx[k] = rstd[i] * (g - sum_g * inv_n - xhat * sum_g_xhat * inv_n);
    }
  }
  write_f64(c.out[0], gx);
  if (wanted(c, c.out[1], r.inner, "grad_weight")) write_f64(c.out[1], gw);
  if (wanted(c, c.out[2], r.inner, "grad_bias")) write_f64(c.out[2], gb);
}

}  // namespace ingot::reference
