// BatchNorm2d on ingot::batch_norm, which updates the running statistics in place.
#include "ingot/nn/batch_norm.h"

#include "ingot/autograd/checkpoint.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/norm.h"

namespace ingot::nn {

BatchNorm2d::BatchNorm2d(int64_t num_features, const BatchNormOptions& options)
    : Module("BatchNorm2d"), c_(num_features), options_(options) {
  INGOT_CHECK_SHAPE(c_ > 0, "BatchNorm2d: num_features {} must be >= 1", c_);
  INGOT_CHECK(options.eps > 0.0 && options.momentum >= 0.0 && options.momentum <= 1.0,
              "BatchNorm2d: eps {} must be > 0 and momentum {} in [0, 1]", options.eps, options.momentum);
  if (options.affine) {
    weight_ = register_parameter("weight", ones({c_}));
    bias_ = register_parameter("bias", zeros({c_}));
  }
  if (options.track_running_stats) {
    running_mean_ = register_buffer("running_mean", zeros({c_}));
    running_var_ = register_buffer("running_var", ones({c_}));
    num_batches_tracked_ = register_buffer("num_batches_tracked", Tensor::scalar(0, DType::I64));
  }
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  output_shape(x.shape());
  const bool batch_stats = is_training() || !options_.track_running_stats;
  // A checkpointed segment recomputed in the backward pass normalises the same batch with the
  // same batch statistics, but its forward already moved the running statistics: they are not
  // passed (batch_norm then updates scratch copies) and the count stays.
  const bool update = batch_stats && options_.track_running_stats && !autograd::is_recomputing();
  if (is_training() && options_.track_running_stats && update) {
    NoGradGuard no_grad;
    // An op, not a host read and a fill: a captured step replays the count's increment.
    num_batches_tracked_.copy_(add(num_batches_tracked_, Scalar(1)));
  }
  const bool pass_stats = !batch_stats || update;
  return batch_norm(x, weight_, bias_, pass_stats ? running_mean_ : Tensor(), pass_stats ? running_var_ : Tensor(),
                    batch_stats, options_.momentum, options_.eps)
      .y;
}

Shape BatchNorm2d::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 4 && input[1] == c_, "BatchNorm2d({}) expects NCHW input with {} channels, got {}",
                    c_, c_, input.str());
  return input;
}

std::string BatchNorm2d::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", c_, options_.eps, options_.momentum,
                     py_bool(options_.affine), py_bool(options_.track_running_stats));
}

}  // namespace ingot::nn
