// BasicBlock: torch registration order (conv1, bn1, conv2, bn2, shortcut), so that parameters
// are drawn and listed in the same order as the equivalent torch module. In eval the BatchNorms
// fold into the convs (nn/fusion.h), the first with its ReLU fused.
#include "ingot/nn/basic_block.h"

#include "ingot/nn/fusion.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {

BasicBlock::BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride, Generator* gen,
                       std::string shortcut_name)
    : Module("BasicBlock"),
      in_(in_channels),
      out_(out_channels),
      stride_(stride),
      shortcut_name_(std::move(shortcut_name)) {
  INGOT_CHECK_SHAPE(stride >= 1, "BasicBlock: stride {} must be >= 1", stride);
  Conv2dOptions c3;
  c3.stride = {stride, stride};
  c3.padding = {1, 1};
  c3.bias = false;
  register_module("conv1", std::make_shared<Conv2d>(in_, out_, 3, c3, gen));
  register_module("bn1", std::make_shared<BatchNorm2d>(out_));
  c3.stride = {1, 1};
  register_module("conv2", std::make_shared<Conv2d>(out_, out_, 3, c3, gen));
  register_module("bn2", std::make_shared<BatchNorm2d>(out_));
  if (stride != 1 || in_ != out_) {
    Conv2dOptions c1;
    c1.stride = {stride, stride};
    c1.bias = false;
    register_module(shortcut_name_,
                    std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
                        std::make_shared<Conv2d>(in_, out_, 1, c1, gen), std::make_shared<BatchNorm2d>(out_)}));
  }
}

Tensor BasicBlock::forward(const Tensor& x) {
  const Tensor y = block_conv_bn_act(*this, "conv2", "bn2", Activation::None,
                                     block_conv_bn_act(*this, "conv1", "bn1", Activation::Relu, x));
  const ModulePtr shortcut = get_submodule(shortcut_name_);
  return relu(y + (shortcut ? (*shortcut)(x) : x));
}

Shape BasicBlock::output_shape(const Shape& input) const {
  const Shape y = get_submodule("conv2")->output_shape(get_submodule("conv1")->output_shape(input));
  if (const ModulePtr shortcut = get_submodule(shortcut_name_))
    INGOT_CHECK_SHAPE(shortcut->output_shape(input) == y, "BasicBlock: shortcut and main path differ");
  return y;
}

std::string BasicBlock::extra_repr() const {
  return fmt::format("{}, {}, stride={}, shortcut={}", in_, out_, stride_, has_projection() ? "conv1x1+bn" : "identity");
}

}  // namespace ingot::nn
