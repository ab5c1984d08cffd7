// torch.nn.init's formulas on Philox draws: the same distributions as PyTorch, not the same
// numbers (PyTorch's CPU generator is a Mersenne Twister).
#include "ingot/nn/init.h"

#include <cmath>

namespace ingot::nn::init {

std::pair<int64_t, int64_t> fans(const Shape& shape) {
  INGOT_CHECK_SHAPE(shape.size() >= 2, "init: fan in and fan out need a weight of 2 or more dims, got {}", shape.str());
  int64_t receptive = 1;
  for (int i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

Tensor kaiming_uniform(const Shape& shape, double a, Generator& gen) {
  const int64_t fan_in = fans(shape).first;
  INGOT_CHECK_SHAPE(fan_in > 0, "kaiming_uniform: weight {} has fan_in 0", shape.str());
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double bound = gain * std::sqrt(3.0 / static_cast<double>(fan_in));
  return uniform(shape, -bound, bound, gen);
}

Tensor uniform(const Shape& shape, double low, double high, Generator& gen) {
  return ingot::uniform(shape, low, high, DType::F32, &gen);
}

Tensor normal(const Shape& shape, double mean, double std, Generator& gen) {
  return ingot::normal(shape, mean, std, DType::F32, &gen);
}

Tensor fan_in_uniform(const Shape& shape, int64_t fan_in, Generator& gen) {
  const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return uniform(shape, -bound, bound, gen);
}

Generator& generator_or_default(Generator* gen) { return gen != nullptr ? *gen : default_generator(); }

}  // namespace ingot::nn::init
