// Pooling layers on ingot::max_pool2d / avg_pool2d / adaptive_avg_pool2d.
#include "ingot/nn/pooling.h"

namespace ingot::nn {

namespace {

Pool2dParams resolved(Pool2dParams p) {
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] == 0) p.stride[i] = p.kernel[i];
  }
  INGOT_CHECK_SHAPE(p.kernel[0] >= 1 && p.kernel[1] >= 1 && p.stride[0] >= 1 && p.stride[1] >= 1 && p.padding[0] >= 0 &&
                        p.padding[1] >= 0 && 2 * p.padding[0] <= p.kernel[0] && 2 * p.padding[1] <= p.kernel[1],
                    "pooling: kernel {}x{} and stride {}x{} must be >= 1, padding {}x{} at most half the kernel",
                    p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.padding[0], p.padding[1]);
  return p;
}

Shape pooled(const char* layer, const Shape& input, const Pool2dParams& p) {
  INGOT_CHECK_SHAPE(input.size() == 4, "{} expects NCHW input, got {}", layer, input.str());
  const Shape out = pool2d_output_shape(input, p);
  INGOT_CHECK_SHAPE(out[2] > 0 && out[3] > 0, "{}: input {} is smaller than the kernel {}x{}", layer, input.str(),
                    p.kernel[0], p.kernel[1]);
  return out;
}

std::string pool_repr(const Pool2dParams& p) {
  const auto one = [](const std::array<int64_t, 2>& a) {
    return a[0] == a[1] ? fmt::format("{}", a[0]) : fmt::format("({}, {})", a[0], a[1]);
  };
  return fmt::format("kernel_size={}, stride={}, padding={}, ceil_mode={}", one(p.kernel), one(p.stride),
                     one(p.padding), py_bool(p.ceil_mode));
}

}  // namespace

MaxPool2d::MaxPool2d(const Pool2dParams& params) : Module("MaxPool2d"), p_(resolved(params)) {}
Tensor MaxPool2d::forward(const Tensor& x) {
  output_shape(x.shape());
  return max_pool2d_values(x, p_);
}
Shape MaxPool2d::output_shape(const Shape& input) const { return pooled("MaxPool2d", input, p_); }
std::string MaxPool2d::extra_repr() const { return pool_repr(p_); }

AvgPool2d::AvgPool2d(const Pool2dParams& params) : Module("AvgPool2d"), p_(resolved(params)) {}
Tensor AvgPool2d::forward(const Tensor& x) {
  output_shape(x.shape());
  return avg_pool2d(x, p_);
}
Shape AvgPool2d::output_shape(const Shape& input) const { return pooled("AvgPool2d", input, p_); }
std::string AvgPool2d::extra_repr() const {
  return pool_repr(p_) + fmt::format(", count_include_pad={}", py_bool(p_.count_include_pad));
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(std::array<int64_t, 2> output_size)
    : Module("AdaptiveAvgPool2d"), out_(output_size) {
  INGOT_CHECK_SHAPE(out_[0] >= 1 && out_[1] >= 1, "AdaptiveAvgPool2d: output size {}x{} must be >= 1", out_[0],
                    out_[1]);
}
Tensor AdaptiveAvgPool2d::forward(const Tensor& x) {
  output_shape(x.shape());
  return adaptive_avg_pool2d(x, out_);
}
Shape AdaptiveAvgPool2d::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 4 && input[2] > 0 && input[3] > 0,
                    "AdaptiveAvgPool2d expects NCHW input with non-empty H and W, got {}", input.str());
  return Shape{input[0], input[1], out_[0], out_[1]};
}
std::string AdaptiveAvgPool2d::extra_repr() const {
  return out_[0] == out_[1] ? fmt::format("output_size={}", out_[0])
                            : fmt::format("output_size=({}, {})", out_[0], out_[1]);
}

}  // namespace ingot::nn
