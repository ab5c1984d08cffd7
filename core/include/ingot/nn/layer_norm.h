// LayerNorm (torch.nn.LayerNorm): normalises over the trailing `normalized_shape` dims.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::nn {

class LayerNorm : public Module {
 public:
  /// With elementwise_affine: weight ones and bias zeros of `normalized_shape`.
  explicit LayerNorm(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  const Shape& normalized_shape() const { return shape_; }
  double eps() const { return eps_; }
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }

 private:
  Shape shape_;
  double eps_;
  Tensor weight_, bias_;
};

}  // namespace ingot::nn
