// Gradient clipping: the total norm (fused GLOBAL_NORM for the 2-norm), then one in-place scale
// of each gradient when it is too large; value clipping clamps in place.
#include "ingot/optim/clip_grad.h"

#include <algorithm>
#include <cmath>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/multi_tensor.h"
#include "ingot/ops/reduce.h"

namespace ingot::optim {

namespace {

std::vector<Tensor> grads_of(const std::vector<Tensor>& params) {
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    if (!p.defined()) continue;
    Tensor g = p.grad();
    if (g.defined()) grads.push_back(std::move(g));
  }
  return grads;
}

// sum |g|^p of one gradient.
double sum_of_pow(const Tensor& g, double p) { return sum(pow(abs(g), p)).item(); }

double total_norm(const std::vector<Tensor>& grads, double norm_type) {
  if (norm_type == 2.0) return global_norm(grads).item();
  if (std::isinf(norm_type)) {
    double m = 0.0;
    for (const Tensor& g : grads)
      if (g.numel() > 0) m = std::max(m, max(abs(g)).item());
    return m;
  }
  double sum = 0.0;
  for (const Tensor& g : grads)
    if (g.numel() > 0) sum += sum_of_pow(g, norm_type);
  return std::pow(sum, 1.0 / norm_type);
}

}  // namespace

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  INGOT_CHECK_AS(norm_type > 0.0, ConfigError, "clip_grad_norm_: norm_type is {}, expected > 0 (2 or inf usually)",
                 norm_type);
  NoGradGuard no_grad;
  const std::vector<Tensor> grads = grads_of(params);
  if (grads.empty()) return 0.0;
  const double norm = total_norm(grads, norm_type);
  INGOT_CHECK(!error_if_nonfinite || std::isfinite(norm),
              "clip_grad_norm_: the total {}-norm of the gradients is {}; the loss or a gradient is not finite "
              "(lower the learning rate, or use mixed precision's loss scaling)",
              norm_type, norm);
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0 || std::isnan(coef)) {
    for (const Tensor& g : grads) g.copy_(mul(g, coef));
  }
  return norm;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  INGOT_CHECK_AS(clip_value >= 0.0, ConfigError, "clip_grad_value_: clip_value is {}, expected >= 0", clip_value);
  NoGradGuard no_grad;
  for (const Tensor& g : grads_of(params)) g.copy_(clamp(g, -clip_value, clip_value));
}

}  // namespace ingot::optim
