// InvertedResidual: MobileNetV2's block (Sandler et al. 2018) in torchvision's layout: an optional
// 1x1 expansion conv-BN-ReLU6, a 3x3 depthwise conv-BN-ReLU6 (stride), then a linear 1x1
// projection conv-BN; the input is added when the stride is 1 and the channel count is unchanged.
// The layers sit in a child Sequential `conv` whose conv-BN-ReLU6 groups are Sequentials too, so
// the state_dict names equal torchvision's: conv.0.0.weight, conv.0.1.*, ..., conv.N.weight,
// conv.N+1.* (N = 2 with expansion, 1 without).
#pragma once

#include <memory>

#include "ingot/nn/sequential.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

/// conv(kernel, stride, groups, no bias) -> BatchNorm2d -> ReLU6, children "0", "1", "2"
/// (torchvision's Conv2dNormActivation with ReLU6); padding (kernel - 1) / 2.
std::shared_ptr<Sequential> conv_bn_relu6(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                                          int64_t groups, Generator* gen);

class InvertedResidual : public Module {
 public:
  InvertedResidual(int64_t in_channels, int64_t out_channels, int64_t stride, int64_t expand_ratio,
                   Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  bool is_block() const override { return true; }

  /// True when the input is added to the block's output (stride 1, in == out).
  bool residual() const { return residual_; }

 private:
  int64_t in_, out_, stride_, expand_;
  bool residual_;
};

}  // namespace ingot::nn
