// Parameter-free activation layers: ReLU, GELU (erf form, torch's default), Sigmoid, Tanh.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override;
};

class GELU : public Module {
 public:
  GELU() : Module("GELU") {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return "approximate='none'"; }
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

/// One of the above by name ("relu", "gelu", "sigmoid", "tanh"); throws for another name.
ModulePtr make_activation(const std::string& name);

}  // namespace ingot::nn
