// The transformer's parts beyond attention: a learned position embedding added to [B, T, C], the
// GPT-2 MLP (c_fc, GELU, c_proj, dropout) and the block (pre-LayerNorm as GPT-2: x + attn(ln_1(x)),
// then x + mlp(ln_2(x)); or post-LayerNorm as the original Transformer and BERT: ln_1(x +
// attn(x)), then ln_2(x + mlp(x))). State-dict names follow Hugging Face's GPT-2 (ln_1, attn,
// ln_2, mlp.c_fc, mlp.c_proj).
#pragma once

#include <memory>

#include "ingot/nn/attention.h"
#include "ingot/nn/layer_norm.h"
#include "ingot/nn/sequential.h"

namespace ingot::nn {

/// x [B, T, C] + weight[:T]; weight [max_positions, C] ~ N(0, std).
class PositionEmbedding : public Module {
 public:
  PositionEmbedding(int64_t max_positions, int64_t dim, double std = 0.02, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override { return add_at(x, 0); }
  /// The embeddings of positions offset .. offset + T - 1 added (incremental decoding).
  Tensor add_at(const Tensor& x, int64_t offset) const;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  Tensor weight() const { return tensor("weight"); }

 private:
  int64_t max_, dim_;
};

struct BlockConfig {
  AttentionConfig attention;
  int64_t hidden = 0;       ///< the MLP's width; 0 = 4 * dim
  bool norm_first = true;   ///< pre-LayerNorm (GPT-2); false: post-LayerNorm (BERT)
  double eps = 1e-5;
  std::string activation = "gelu_tanh";  ///< GPT-2's "gelu_new"; BERT's is "gelu"
};

class TransformerBlock : public Module {
 public:
  explicit TransformerBlock(const BlockConfig& config, Generator* gen = nullptr, Generator* dropout_gen = nullptr);
  Tensor forward(const Tensor& x) override { return run(x, Tensor(), nullptr); }
  /// With an attention mask and a key/value cache (MultiheadAttention::attend).
  Tensor run(const Tensor& x, const Tensor& mask, KvCache* cache);
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  bool is_block() const override { return true; }
  const BlockConfig& config() const { return config_; }

 private:
  BlockConfig config_;
};

}  // namespace ingot::nn
