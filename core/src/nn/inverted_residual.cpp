// InvertedResidual: torchvision's registration order, so parameters are listed as torchvision
// lists them. The depthwise conv is a grouped conv (groups = channels), run by the backend's
// convolution like any other.
#include "ingot/nn/inverted_residual.h"

#include <cmath>

#include "ingot/nn/activation.h"
#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {

std::shared_ptr<Sequential> conv_bn_relu6(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                                          int64_t groups, Generator* gen) {
  Conv2dOptions c;
  c.stride = {stride, stride};
  c.padding = {(kernel - 1) / 2, (kernel - 1) / 2};
  c.groups = groups;
  c.bias = false;
  return std::make_shared<Sequential>(
      std::initializer_list<ModulePtr>{std::make_shared<Conv2d>(in_channels, out_channels, kernel, c, gen),
                                       std::make_shared<BatchNorm2d>(out_channels), std::make_shared<ReLU6>()});
}

InvertedResidual::InvertedResidual(int64_t in_channels, int64_t out_channels, int64_t stride, int64_t expand_ratio,
                                   Generator* gen)
    : Module("InvertedResidual"),
      in_(in_channels),
      out_(out_channels),
      stride_(stride),
      expand_(expand_ratio),
      residual_(stride == 1 && in_channels == out_channels) {
  INGOT_CHECK_SHAPE(stride == 1 || stride == 2, "InvertedResidual: stride {} must be 1 or 2", stride);
  INGOT_CHECK_SHAPE(in_channels >= 1 && out_channels >= 1 && expand_ratio >= 1,
                    "InvertedResidual: channels {} -> {} and expansion {} must be >= 1", in_channels, out_channels,
                    expand_ratio);
  const int64_t hidden = in_channels * expand_ratio;
  auto conv = std::make_shared<Sequential>();
  if (expand_ratio != 1) conv->push_back(conv_bn_relu6(in_channels, hidden, 1, 1, 1, gen));
  conv->push_back(conv_bn_relu6(hidden, hidden, 3, stride, hidden, gen));
  Conv2dOptions c;
  c.bias = false;
  conv->push_back(std::make_shared<Conv2d>(hidden, out_channels, 1, c, gen));
  conv->push_back(std::make_shared<BatchNorm2d>(out_channels));
  register_module("conv", conv);
}

Tensor InvertedResidual::forward(const Tensor& x) {
  const Tensor y = (*get_submodule("conv"))(x);
  return residual_ ? x + y : y;
}

Shape InvertedResidual::output_shape(const Shape& input) const {
  const Shape y = get_submodule("conv")->output_shape(input);
  if (residual_) INGOT_CHECK_SHAPE(y == input, "InvertedResidual: input {} and output {} differ", input.str(), y.str());
  return y;
}

std::string InvertedResidual::extra_repr() const {
  return fmt::format("{}, {}, stride={}, expand_ratio={}{}", in_, out_, stride_, expand_,
                     residual_ ? ", residual" : "");
}

}  // namespace ingot::nn
