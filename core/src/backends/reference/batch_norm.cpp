// BATCH_NORM (x [N, C, ...], weight, bias, running_mean, running_var) -> (y, save_mean,
// save_invstd) in training (batch statistics, running stats updated in place with momentum and
// the unbiased variance, like torch) or eval mode (running statistics); BATCH_NORM_RELU (the same
// with relu applied to y); BATCH_NORM_BWD.
#include <cmath>
#include <vector>

#include "backends/reference/check.h"
#include "backends/reference/dense_io.h"
#include "backends/reference/kernels.h"

namespace ingot::reference {

namespace {

// x viewed as [n, channels, spatial]; `count` = values per channel.
struct Channels {
  int64_t n, channels, spatial, count;
  int64_t channel_of(int64_t dense_index) const { return dense_index / spatial % channels; }
};

Channels channels_of(const sdk::OpCall& c, const ingot_tensor_desc& x) {
  if (x.ndim < 2) fail("{}: input {} must be [N, C, ...]", op_name(c.op), shape_str(x));
  Channels ch{x.shape[0], x.shape[1], 1, 0};
  for (int d = 2; d < x.ndim; ++d) ch.spatial *= x.shape[d];
  ch.count = ch.n * ch.spatial;
  return ch;
}

// Per-channel tensor: `channels` values, or empty when it is 0-size (absent) or unused.
std::vector<double> per_channel(const sdk::OpCall& c, const ingot_tensor_desc& d, int64_t channels, bool use,
                                const char* what) {
  if (!use || is_absent(d)) return {};
  if (sdk::numel(d) != channels) fail("{}: {} {} should have {} elements", op_name(c.op), what, shape_str(d), channels);
  return read_f64(d);
}

}  // namespace

void run_batch_norm(const sdk::OpCall& c) {
  expect_arity(c, 5, 3);
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  expect_same_shape(c, c.in[0], c.out[0], "x", "y");
  const Channels ch = channels_of(c, c.in[0]);
  const auto nc = static_cast<size_t>(ch.channels);
  const std::vector<double> x = read_f64(c.in[0]);
  const std::vector<double> w = per_channel(c, c.in[1], ch.channels, a.has_affine != 0, "weight");
  const std::vector<double> b = per_channel(c, c.in[2], ch.channels, a.has_affine != 0, "bias");
  std::vector<double> running_mean = per_channel(c, c.in[3], ch.channels, true, "running_mean");
  std::vector<double> running_var = per_channel(c, c.in[4], ch.channels, true, "running_var");
  std::vector<double> mean(nc, 0.0), invstd(nc, 0.0);
  if (a.training) {
    if (ch.count <= 1) fail("batch_norm: training needs more than one value per channel, input {}", shape_str(c.in[0]));
    std::vector<double> sq(nc, 0.0);
    for (size_t i = 0; i < x.size(); ++i) mean[ch.channel_of(static_cast<int64_t>(i))] += x[i];
    for (double& m : mean) m /= static_cast<double>(ch.count);
    for (size_t i = 0; i < x.size(); ++i) {
      const int64_t k = ch.channel_of(static_cast<int64_t>(i));
      sq[k] += (x[i] - mean[k]) * (x[i] - mean[k]);
    }
    for (size_t k = 0; k < nc; ++k) {
      const double var = sq[k] / static_cast<double>(ch.count);
      invstd[k] = 1.0 / std::sqrt(var + a.eps);
      const double unbiased = sq[k] / static_cast<double>(ch.count - 1);
      if (!running_mean.empty()) running_mean[k] = (1.0 - a.momentum) * running_mean[k] + a.momentum * mean[k];
      if (!running_var.empty()) running_var[k] = (1.0 - a.momentum) * running_var[k] + a.momentum * unbiased;
    }
    if (!running_mean.empty()) write_f64(c.in[3], running_mean);
    if (!running_var.empty()) write_f64(c.in[4], running_var);
  } else {
    if (running_mean.empty() || running_var.empty()) {
      fail("batch_norm: eval mode needs running_mean {} and running_var {}", shape_str(c.in[3]), shape_str(c.in[4]));
    }
    for (size_t k = 0; k < nc; ++k) {
      mean[k] = running_mean[k];
      invstd[k] = 1.0 / std::sqrt(running_var[k] + a.eps);
    }
  }
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t k = ch.channel_of(static_cast<int64_t>(i));
    y[i] = (x[i] - mean[k]) * invstd[k] * (w.empty() ? 1.0 : w[k]) + (b.empty() ? 0.0 : b[k]);
    if (c.op == INGOT_OP_BATCH_NORM_RELU && !(y[i] > 0.0) && !std::isnan(y[i])) y[i] = 0.0;  // relu's rule (unary.cpp)
  }
  write_f64(c.out[0], y);
  if (!is_absent(c.out[1])) write_f64(c.out[1], mean);
  if (!is_absent(c.out[2])) write_f64(c.out[2], invstd);
}

void run_batch_norm_bwd(const sdk::OpCall& c) {
  expect_arity(c, 5, 3);
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  expect_same_shape(c, c.in[0], c.in[1], "grad_y", "x");
  expect_same_shape(c, c.out[0], c.in[1], "grad_x", "x");
  const Channels ch = channels_of(c, c.in[1]);
  const auto nc = static_cast<size_t>(ch.channels);
  const std::vector<double> gy = read_f64(c.in[0]);
  const std::vector<double> x = read_f64(c.in[1]);
  const std::vector<double> w = per_channel(c, c.in[2], ch.channels, a.has_affine != 0, "weight");
  const std::vector<double> mean = per_channel(c, c.in[3], ch.channels, true, "save_mean");
  const std::vector<double> invstd = per_channel(c, c.in[4], ch.channels, true, "save_invstd");
  if (mean.empty() || invstd.empty()) fail("batch_norm_bwd: save_mean and save_invstd are required");
  std::vector<double> sum_gy(nc, 0.0), sum_gy_xhat(nc, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t k = ch.channel_of(static_cast<int64_t>(i));
    sum_gy[k] += gy[i];
    sum_gy_xhat[k] += gy[i] * (x[i] - mean[k]) * invstd[k];
  }
  std::vector<double> gx(x.size());
  const double inv_count = ch.count > 0 ? 1.0 / static_cast<double>(ch.count) : 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t k = ch.channel_of(static_cast<int64_t>(i));
    const double scale = invstd[k] * (w.empty() ? 1.0 : w[k]);
    if (a.training) {  // batch statistics depend on x
      const double xhat = (x[i] - mean[k]) * invstd[k];
      gx[i] = scale * (gy[i] - sum_gy[k] * inv_count - xhat * sum_gy_xhat[k] * inv_count);
    } else {  // running statistics are constants
      gx[i] = scale * gy[i];
    }
  }
  write_f64(c.out[0], gx);
  if (!is_absent(c.out[1])) write_f64(c.out[1], sum_gy_xhat);
  if (!is_absent(c.out[2])) write_f64(c.out[2], sum_gy);
}

}  // namespace ingot::reference
