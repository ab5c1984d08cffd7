// BasicBlock: torch registration order (conv1, bn1, conv2, bn2, shortcut), so that parameters
// are drawn and listed in the same order as the equivalent torch module. In eval the BatchNorms
// fold into the convs (nn/fusion.h), the first with its ReLU fused.
#include "ingot/nn/basic_block.h"

#include "ingot/nn/fusion.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {

BasicBlock::BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride, Generator* gen)
    : Module("BasicBlock"), in_(in_channels), out_(out_channels), stride_(stride) {
  INGOT_CHECK_SHAPE(stride >= 1, "BasicBlock: stride {} must be >= 1", stride);
  Conv2dOptions c3;
  c3.stride = {stride, stride};
  c3.padding = {1, 1};
  c3.bias = false;
  conv1_ = register_module("conv1", std::make_shared<Conv2d>(in_, out_, 3, c3, gen));
  bn1_ = register_module("bn1", std::make_shared<BatchNorm2d>(out_));
  c3.stride = {1, 1};
  conv2_ = register_module("conv2", std::make_shared<Conv2d>(out_, out_, 3, c3, gen));
  bn2_ = register_module("bn2", std::make_shared<BatchNorm2d>(out_));
  if (stride != 1 || in_ != out_) {
    Conv2dOptions c1;
    c1.stride = {stride, stride};
    c1.bias = false;
    shortcut_ = register_module(
        "shortcut", std::make_shared<Sequential>(std::initializer_list<ModulePtr>{
                        std::make_shared<Conv2d>(in_, out_, 1, c1, gen), std::make_shared<BatchNorm2d>(out_)}));
  }
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor y = conv_bn_act(*conv1_, bn1_.get(), Activation::Relu, x);
  y = conv_bn_act(*conv2_, bn2_.get(), Activation::None, y);
  return relu(y + (shortcut_ ? shortcut_->forward(x) : x));
}

Shape BasicBlock::output_shape(const Shape& input) const {
  const Shape y = conv2_->output_shape(conv1_->output_shape(input));
  if (shortcut_) INGOT_CHECK_SHAPE(shortcut_->output_shape(input) == y, "BasicBlock: shortcut and main path differ");
  return y;
}

std::string BasicBlock::extra_repr() const {
  return fmt::format("{}, {}, stride={}, shortcut={}", in_, out_, stride_, shortcut_ ? "conv1x1+bn" : "identity");
}

}  // namespace ingot::nn
