// Activation layers: each forwards to its elementwise op.
#include "ingot/nn/activation.h"

#include "ingot/ops/elementwise.h"

namespace ingot::nn {

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
Tensor ReLU6::forward(const Tensor& x) { return clamp(x, 0.0, 6.0); }
GELU::GELU(std::string approximate) : Module("GELU"), approximate_(std::move(approximate)) {
  INGOT_CHECK_AS(approximate_ == "none" || approximate_ == "tanh", ConfigError,
                 "GELU: approximate '{}' is not 'none' or 'tanh'", approximate_);
}

Tensor GELU::forward(const Tensor& x) { return is_tanh() ? gelu_tanh(x) : gelu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
Tensor Tanh::forward(const Tensor& x) { return tanh(x); }

ModulePtr make_activation(const std::string& name) {
  if (name == "relu") return std::make_shared<ReLU>();
  if (name == "relu6") return std::make_shared<ReLU6>();
  if (name == "gelu") return std::make_shared<GELU>();
  if (name == "gelu_tanh") return std::make_shared<GELU>("tanh");
  if (name == "sigmoid") return std::make_shared<Sigmoid>();
  if (name == "tanh") return std::make_shared<Tanh>();
  throw Error(fmt::format("unknown activation '{}': expected relu, relu6, gelu, gelu_tanh, sigmoid or tanh", name));
}

}  // namespace ingot::nn
