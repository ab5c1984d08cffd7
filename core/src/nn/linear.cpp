// Linear: forward is ingot::linear (a transposed weight view, no copy).
#include "ingot/nn/linear.h"

#include <cmath>

#include "ingot/nn/init.h"
#include "ingot/ops/linalg.h"

namespace ingot::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Generator* gen)
    : Module("Linear"), in_(in_features), out_(out_features) {
  INGOT_CHECK_SHAPE(in_features > 0 && out_features > 0, "Linear: in_features {} and out_features {} must be >= 1",
                    in_features, out_features);
  Generator& g = init::generator_or_default(gen);
  weight_ = register_parameter("weight", init::kaiming_uniform({out_, in_}, std::sqrt(5.0), g));
  if (bias) bias_ = register_parameter("bias", init::fan_in_uniform({out_}, in_, g));
}

Tensor Linear::forward(const Tensor& x) {
  INGOT_CHECK_SHAPE(x.dim() >= 1 && x.shape().back() == in_, "Linear({} -> {}): input {} must end in {} features", in_,
                    out_, x.shape().str(), in_);
  return linear(x, weight_, bias_);
}

Shape Linear::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() >= 1 && input.back() == in_,
                    "Linear({} -> {}) expects {} input features, the input is {}", in_, out_, in_, input.str());
  Shape out = input;
  out[out.size() - 1] = out_;
  return out;
}

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_, out_, py_bool(bias_.defined()));
}

}  // namespace ingot::nn
