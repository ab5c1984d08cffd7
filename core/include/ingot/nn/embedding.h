// Embedding (torch.nn.Embedding): a lookup table [num_embeddings, embedding_dim] indexed by
// integer tensors.
#pragma once

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

class Embedding : public Module {
 public:
  /// weight ~ N(0, 1) from `gen` (the default generator when null).
  Embedding(int64_t num_embeddings, int64_t embedding_dim, Generator* gen = nullptr);
  /// indices (any integer dtype, any shape) -> shape indices.shape + [embedding_dim]; the
  /// gradient flows to the weight through index_select's rule (scatter-add of rows).
  Tensor forward(const Tensor& indices) override;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;

  Tensor weight() const { return weight_; }

 private:
  int64_t num_, dim_;
  Tensor weight_;
};

}  // namespace ingot::nn
