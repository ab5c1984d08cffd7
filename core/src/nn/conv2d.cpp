// Conv2d: forward is ingot::conv2d (NCHW / OIHW, torch's layouts).
#include "ingot/nn/conv2d.h"

#include <cmath>

#include "ingot/nn/init.h"

namespace ingot::nn {

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel, const Conv2dOptions& options,
               Generator* gen)
    : Module("Conv2d"), in_(in_channels), out_(out_channels), kernel_(kernel), options_(options) {
  INGOT_CHECK_SHAPE(in_ > 0 && out_ > 0 && kernel[0] > 0 && kernel[1] > 0,
                    "Conv2d: channels {} -> {} and kernel {}x{} must be >= 1", in_, out_, kernel[0], kernel[1]);
  INGOT_CHECK_SHAPE(options.groups >= 1 && in_ % options.groups == 0 && out_ % options.groups == 0,
                    "Conv2d: groups={} must divide in_channels {} and out_channels {}", options.groups, in_, out_);
  Generator& g = init::generator_or_default(gen);
  const Shape w{out_, in_ / options.groups, kernel[0], kernel[1]};
  weight_ = register_parameter("weight", init::kaiming_uniform(w, std::sqrt(5.0), g));
  if (options.bias) bias_ = register_parameter("bias", init::fan_in_uniform({out_}, init::fans(w).first, g));
}

Conv2dParams Conv2d::params() const {
  Conv2dParams p;
  p.stride = options_.stride;
  p.padding = options_.padding;
  p.dilation = options_.dilation;
  p.groups = options_.groups;
  return p;
}

Tensor Conv2d::forward(const Tensor& x) {
  output_shape(x.shape());  // a message that names this layer
  return conv2d(x, weight_, bias_, params());
}

Shape Conv2d::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 4 && input[1] == in_,
                    "Conv2d({} -> {}) expects NCHW input with {} channels, got {}", in_, out_, in_, input.str());
  const Shape out = conv2d_output_shape(input, weight_.shape(), params());
  INGOT_CHECK_SHAPE(out[2] > 0 && out[3] > 0, "Conv2d({} -> {}): input {} gives an empty output {}", in_, out_,
                    input.str(), out.str());
  return out;
}

std::string Conv2d::extra_repr() const {
  auto pair = [](const std::array<int64_t, 2>& a) { return fmt::format("({}, {})", a[0], a[1]); };
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_, out_, pair(kernel_), pair(options_.stride));
  if (options_.padding != std::array<int64_t, 2>{0, 0}) s += ", padding=" + pair(options_.padding);
  if (options_.dilation != std::array<int64_t, 2>{1, 1}) s += ", dilation=" + pair(options_.dilation);
  if (options_.groups != 1) s += fmt::format(", groups={}", options_.groups);
  if (!options_.bias) s += ", bias=False";
  return s;
}

}  // namespace ingot::nn
