// Helpers shared by the training-math tests: golden fixture paths and whether autograd runs.
#pragma once

#include <string>

#include "ingot/ops/ops.h"
#include "ingot/tensor/tensor.h"

namespace ingot::test {

inline std::string golden_path(const std::string& name) { return std::string(INGOT_GOLDEN_DIR) + "/" + name; }

/// True once the autograd engine computes gradients (d(3x)/dx = 3); gradient checks skip otherwise.
inline bool autograd_works() {
  try {
    const Tensor x = Tensor::from_vector<float>({1.0f, 2.0f}, Shape{2});
    x.set_requires_grad(true);
    sum(x * 3.0).backward();
    const Tensor g = x.grad();
    return g.defined() && g.to_vector<float>() == std::vector<float>{3.0f, 3.0f};
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace ingot::test
