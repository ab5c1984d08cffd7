// Parameter-free activation layers: ReLU, ReLU6, GELU (erf form, torch's default, or tanh form), Sigmoid, Tanh.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override;
};

/// torch.nn.ReLU6: min(max(x, 0), 6) (MobileNetV2's activation).
class ReLU6 : public Module {
 public:
  ReLU6() : Module("ReLU6") {}
  Tensor forward(const Tensor& x) override;
};

/// torch.nn.GELU: approximate "none" (erf form) or "tanh" (GPT-2's).
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return "approximate='" + approximate_ + "'"; }
  bool is_tanh() const { return approximate_ == "tanh"; }

 private:
  std::string approximate_;
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) override;
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) override;
};

/// One of the above by name ("relu", "relu6", "gelu", "gelu_tanh", "sigmoid", "tanh"); throws for another name.
ModulePtr make_activation(const std::string& name);

}  // namespace ingot::nn
