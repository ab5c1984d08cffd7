// Activation layers: each forwards to its elementwise op.
#include "ingot/nn/activation.h"

#include "ingot/ops/elementwise.h"

namespace ingot::nn {

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
Tensor GELU::forward(const Tensor& x) { return gelu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
Tensor Tanh::forward(const Tensor& x) { return tanh(x); }

ModulePtr make_activation(const std::string& name) {
  if (name == "relu") return std::make_shared<ReLU>();
  if (name == "gelu") return std::make_shared<GELU>();
  if (name == "sigmoid") return std::make_shared<Sigmoid>();
  if (name == "tanh") return std::make_shared<Tanh>();
  throw Error(fmt::format("unknown activation '{}': expected relu, gelu, sigmoid or tanh", name));
}

}  // namespace ingot::nn
