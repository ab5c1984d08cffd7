// NonFiniteGuard: finds the first non-finite quantity of a training step — a gradient or a weight,
// by parameter name — with one fused norm per check and a per-tensor scan only when that norm is
// not finite (so a step that is fine costs one reduction).
#pragma once

#include <string>

#include "ingot/nn/module.h"

namespace ingot::train {

class NonFiniteGuard {
 public:
  explicit NonFiniteGuard(nn::NamedTensors params) : params_(std::move(params)) {}

  /// "" when every gradient is finite, else "the gradient of <name>".
  std::string check_gradients() const;
  /// "" when every parameter is finite, else "the weight <name>".
  std::string check_weights() const;

 private:
  std::string first_nonfinite(bool gradients) const;
  nn::NamedTensors params_;
};

}  // namespace ingot::train
