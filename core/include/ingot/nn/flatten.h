// Flatten (torch.nn.Flatten): merges dims start..end (default 1..-1, keeping the batch dim).
#pragma once

#include "ingot/nn/module.h"

namespace ingot::nn {

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  /// A view when the input's strides allow it, else a copy (Tensor::flatten).
  Tensor forward(const Tensor& x) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  int64_t start_dim() const { return start_; }
  int64_t end_dim() const { return end_; }

 private:
  int64_t start_, end_;
};

}  // namespace ingot::nn
