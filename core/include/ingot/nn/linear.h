// Linear layer (torch.nn.Linear): y = x W^T + b with weight [out, in] and bias [out].
#pragma once

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

class Linear : public Module {
 public:
  /// weight ~ kaiming_uniform(a = sqrt(5)), bias ~ U(+-1/sqrt(in)), both from `gen` (the default
  /// generator when null), weight first (torch's order).
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  Tensor weight() const { return weight_; }
  Tensor bias() const { return bias_; }  ///< undefined without bias

 private:
  int64_t in_, out_;
  Tensor weight_, bias_;
};

}  // namespace ingot::nn
