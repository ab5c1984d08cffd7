// 2-D convolution layer (torch.nn.Conv2d): weight [out, in / groups, kh, kw], bias [out].
#pragma once

#include <array>

#include "ingot/nn/module.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

/// Conv2d's options beyond the channel counts and kernel size (torch's defaults).
struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  bool bias = true;
};

class Conv2d : public Module {
 public:
  /// weight ~ kaiming_uniform(a = sqrt(5)), bias ~ U(+-1/sqrt(fan_in)) with
  /// fan_in = in / groups * kh * kw, from `gen` (the default generator when null).
  Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel, const Conv2dOptions& options = {},
         Generator* gen = nullptr);
  /// Square kernel.
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, const Conv2dOptions& options = {},
         Generator* gen = nullptr)
      : Conv2d(in_channels, out_channels, {kernel, kernel}, options, gen) {}
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  Conv2dParams params() const;
  int64_t in_channels() const { return in_; }
  int64_t out_channels() const { return out_; }
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }  ///< undefined without bias

 private:
  int64_t in_, out_;
  std::array<int64_t, 2> kernel_;
  Conv2dOptions options_;
  Tensor weight_, bias_;
};

}  // namespace ingot::nn
