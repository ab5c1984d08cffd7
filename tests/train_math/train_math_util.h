// Helpers shared by the training-math tests: golden fixture paths.
#pragma once

#include <string>

#include "ingot/ops/ops.h"
#include "ingot/tensor/tensor.h"

namespace ingot::test {

inline std::string golden_path(const std::string& name) { return std::string(INGOT_GOLDEN_DIR) + "/" + name; }

}  // namespace ingot::test
