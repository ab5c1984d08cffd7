// The quant plugin's torch fixtures (tests/golden/make_quant.py -> data/quant.safetensors), read
// once per test program.
#pragma once

#include <filesystem>
#include <string>

#include "ingot/base/error.h"
#include "ingot/io/safetensors.h"

namespace ingot::quant::test_util {

inline const io::SafetensorsFile& golden() {
  static const io::SafetensorsFile f =
      io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "quant.safetensors");
  return f;
}

/// The fixture tensor `name`; an error naming it when the file has none.
inline Tensor golden_tensor(const std::string& name) {
  const auto it = golden().tensors.find(name);
  INGOT_CHECK(it != golden().tensors.end(), "quant.safetensors: no tensor '{}'", name);
  return it->second;
}

}  // namespace ingot::quant::test_util
