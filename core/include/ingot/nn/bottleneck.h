// Bottleneck: the residual block of ResNet-50/101/152 in torchvision's layout ("ResNet v1.5":
// the stride sits on the 3x3 conv): conv1x1-BN-ReLU, conv3x3(stride)-BN-ReLU, conv1x1-BN (4x the
// width), plus a shortcut, then ReLU. The shortcut is the identity, or `downsample`, a 1x1 strided
// conv + BN when the stride or the channel count changes. State_dict names equal torchvision's
// Bottleneck: conv1.weight, bn1.*, conv2.weight, bn2.*, conv3.weight, bn3.*, downsample.0.weight,
// downsample.1.*.
#pragma once

#include <memory>

#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/nn/sequential.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

class Bottleneck : public Module {
 public:
  /// The output has width * 4 channels (torchvision's `expansion`).
  static constexpr int64_t kExpansion = 4;

  Bottleneck(int64_t in_channels, int64_t width, int64_t stride = 1, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  bool is_block() const override { return true; }

  /// True when the shortcut is a 1x1 conv + BN (stride != 1 or in != 4 * width).
  bool has_projection() const { return get_submodule("downsample") != nullptr; }

 private:
  int64_t in_, width_, stride_;
};

}  // namespace ingot::nn
