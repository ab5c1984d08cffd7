// LayerNorm on ingot::layer_norm.
#include "ingot/nn/layer_norm.h"

#include "ingot/ops/creation.h"
#include "ingot/ops/norm.h"

namespace ingot::nn {

LayerNorm::LayerNorm(const Shape& normalized_shape, double eps, bool elementwise_affine)
    : Module("LayerNorm"), shape_(normalized_shape), eps_(eps) {
  INGOT_CHECK_SHAPE(!shape_.empty() && shape_.numel() > 0, "LayerNorm: normalized_shape {} must be non-empty",
                    shape_.str());
  INGOT_CHECK(eps > 0.0, "LayerNorm: eps {} must be > 0", eps);
  if (elementwise_affine) {
    weight_ = register_parameter("weight", ones(shape_));
    bias_ = register_parameter("bias", zeros(shape_));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  output_shape(x.shape());
  return layer_norm(x, shape_, weight_, bias_, eps_).y;
}

Shape LayerNorm::output_shape(const Shape& input) const {
  bool ok = input.size() >= shape_.size();
  for (int i = 0; ok && i < shape_.size(); ++i) ok = input[input.size() - shape_.size() + i] == shape_[i];
  INGOT_CHECK_SHAPE(ok, "LayerNorm({}) expects input ending in {}, got {}", shape_.str(), shape_.str(), input.str());
  return input;
}

std::string LayerNorm::extra_repr() const {
  std::string dims;
  for (int i = 0; i < shape_.size(); ++i) dims += fmt::format("{}{},", i > 0 ? " " : "", shape_[i]);
  if (shape_.size() > 1) dims.pop_back();
  return fmt::format("({}), eps={}, elementwise_affine={}", dims, eps_, py_bool(weight_.defined()));
}

}  // namespace ingot::nn
