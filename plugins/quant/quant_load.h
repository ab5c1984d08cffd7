// Loading a saved int8 model: given the f32 model it was quantized from (its structure, as the
// config builds it), swap in the modules the file describes and load them. The file's tensors say
// everything: a layer with an i8 weight and input_scale is a static int8 layer (its ReLU fused when
// one follows it in a Sequential, as quantization always fuses it; output_scale when it hands u8
// on), one with input_quant_range a DynamicQuantizedLinear; a BatchNorm2d whose tensors are absent
// was folded into its conv (which then has a bias, in f32 or int8).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "ingot/io/safetensors.h"
#include "ingot/nn/module.h"

namespace ingot::quant {

struct LoadSummary {
  size_t layers = 0;   ///< Linear / Conv2d layers of the model
  size_t int8 = 0;     ///< of which the file has in int8
  size_t dynamic = 0;  ///< of which dynamic
};

/// Swaps modules in `model` (in eval afterwards) and loads every tensor of `file` into it
/// (strict: no tensor missing or left over). `source` names the file in messages. Throws
/// InputError when the file does not fit the model (a missing weight, BN tensors beside an int8
/// conv, a u8 output no int8 layer takes); `model` may then be half converted.
LoadSummary load_quantized(nn::Module& model, const io::SafetensorsFile& file, const std::string& source);
LoadSummary load_quantized(nn::Module& model, const std::filesystem::path& path);

}  // namespace ingot::quant
