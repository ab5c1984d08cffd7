// The layers u8 activations pass through between two int8 layers of a Sequential: Identity (what a
// folded BatchNorm2d or a fused ReLU becomes), MaxPool2d (max commutes with quantization), Flatten,
// and Dropout in eval.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::quant {

/// torch.nn.Identity: forward returns its input (any dtype).
class Identity final : public nn::Module {
 public:
  Identity() : nn::Module("Identity") {}
  Tensor forward(const Tensor& x) override { return x; }
};

/// Whether `m` returns a u8 input as u8 with the same quantization parameters, in eval:
/// Identity, Flatten, Dropout, and MaxPool2d when `u8_max_pool` (the device pools u8).
bool passes_u8(const nn::Module& m, bool u8_max_pool);

/// Whether max pooling of a u8 tensor runs on `device` (probed once per device with a tiny input).
bool device_pools_u8(Device device);

}  // namespace ingot::quant
