// Parameter initialisation with PyTorch's distributions (torch.nn.init), drawn from an
// ingot::Generator so that a seed reproduces a model.
#pragma once

#include <utility>

#include "ingot/ops/random.h"
#include "ingot/tensor/tensor.h"

namespace ingot::nn::init {

/// (fan_in, fan_out) of a weight: dims 1 and 0 times the receptive field (torch's
/// _calculate_fan_in_and_fan_out); needs at least 2 dims.
std::pair<int64_t, int64_t> fans(const Shape& shape);
/// U(-bound, bound) with bound = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a^2))
/// (torch.nn.init.kaiming_uniform_, leaky_relu gain). Linear and Conv2d use a = sqrt(5),
/// which gives bound = 1 / sqrt(fan_in).
Tensor kaiming_uniform(const Shape& shape, double a, Generator& gen);
/// U(low, high).
Tensor uniform(const Shape& shape, double low, double high, Generator& gen);
/// N(mean, std^2).
Tensor normal(const Shape& shape, double mean, double std, Generator& gen);
/// The bias of Linear / Conv2d: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (0 bound when fan_in is 0).
Tensor fan_in_uniform(const Shape& shape, int64_t fan_in, Generator& gen);
/// `gen` itself, or the default generator when null.
Generator& generator_or_default(Generator* gen);

}  // namespace ingot::nn::init
