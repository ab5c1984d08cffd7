// Bottleneck: torchvision's registration order (conv1, bn1, conv2, bn2, conv3, bn3, downsample),
// so that parameters are listed in the same order as torchvision's module. In eval the
// BatchNorms fold into the convs (nn/fusion.h), the first two with their ReLU fused.
#include "ingot/nn/bottleneck.h"

#include "ingot/nn/fusion.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {

Bottleneck::Bottleneck(int64_t in_channels, int64_t width, int64_t stride, Generator* gen)
    : Module("Bottleneck"), in_(in_channels), width_(width), stride_(stride) {
  INGOT_CHECK_SHAPE(stride >= 1, "Bottleneck: stride {} must be >= 1", stride);
  INGOT_CHECK_SHAPE(in_channels >= 1 && width >= 1, "Bottleneck: channels {} and width {} must be >= 1", in_channels,
                    width);
  const int64_t out = width * kExpansion;
  Conv2dOptions c1;
  c1.bias = false;
  Conv2dOptions c3 = c1;
  c3.stride = {stride, stride};
  c3.padding = {1, 1};
  register_module("conv1", std::make_shared<Conv2d>(in_, width, 1, c1, gen));
  register_module("bn1", std::make_shared<BatchNorm2d>(width));
  register_module("conv2", std::make_shared<Conv2d>(width, width, 3, c3, gen));
  register_module("bn2", std::make_shared<BatchNorm2d>(width));
  register_module("conv3", std::make_shared<Conv2d>(width, out, 1, c1, gen));
  register_module("bn3", std::make_shared<BatchNorm2d>(out));
  if (stride != 1 || in_ != out) {
    Conv2dOptions cs = c1;
    cs.stride = {stride, stride};
    register_module("downsample",
                    std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
                        std::make_shared<Conv2d>(in_, out, 1, cs, gen), std::make_shared<BatchNorm2d>(out)}));
  }
}

Tensor Bottleneck::forward(const Tensor& x) {
  const Tensor h = block_conv_bn_act(*this, "conv2", "bn2", Activation::Relu,
                                     block_conv_bn_act(*this, "conv1", "bn1", Activation::Relu, x));
  const Tensor y = block_conv_bn_act(*this, "conv3", "bn3", Activation::None, h);
  const ModulePtr shortcut = get_submodule("downsample");
  return relu(y + (shortcut ? (*shortcut)(x) : x));
}

Shape Bottleneck::output_shape(const Shape& input) const {
  Shape y = input;
  for (const char* conv : {"conv1", "conv2", "conv3"}) y = get_submodule(conv)->output_shape(y);
  if (const ModulePtr shortcut = get_submodule("downsample"))
    INGOT_CHECK_SHAPE(shortcut->output_shape(input) == y, "Bottleneck: shortcut and main path differ");
  else
    INGOT_CHECK_SHAPE(input == y, "Bottleneck: input {} and main path {} differ", input.str(), y.str());
  return y;
}

std::string Bottleneck::extra_repr() const {
  return fmt::format("{}, {}, stride={}, shortcut={}", in_, width_ * kExpansion, stride_,
                     has_projection() ? "conv1x1+bn" : "identity");
}

}  // namespace ingot::nn
