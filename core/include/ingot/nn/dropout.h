// Dropout layer (torch.nn.Dropout): active in training, the identity in eval.
#pragma once

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

class Dropout : public Module {
 public:
  /// Draws its masks from `gen` (not owned; it must outlive the layer), or from the default
  /// generator when null.
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

  double p() const { return p_; }
  void set_generator(Generator* gen) { gen_ = gen; }

 private:
  double p_;
  Generator* gen_;
};

}  // namespace ingot::nn
