// Pooling layers: MaxPool2d, AvgPool2d and AdaptiveAvgPool2d (NCHW, torch's semantics).
#pragma once

#include <array>

#include "ingot/nn/module.h"
#include "ingot/ops/pool.h"

namespace ingot::nn {

class MaxPool2d : public Module {
 public:
  /// Pool2dParams' stride 0 means the kernel size (torch's default).
  explicit MaxPool2d(const Pool2dParams& params);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  /// Kernel, stride (resolved), padding, ceil_mode.
  const Pool2dParams& params() const { return p_; }

 private:
  Pool2dParams p_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const Pool2dParams& params);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  /// Kernel, stride (resolved), padding, ceil_mode, count_include_pad.
  const Pool2dParams& params() const { return p_; }

 private:
  Pool2dParams p_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(std::array<int64_t, 2> output_size);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  std::array<int64_t, 2> output_size() const { return out_; }

 private:
  std::array<int64_t, 2> out_;
};

}  // namespace ingot::nn
