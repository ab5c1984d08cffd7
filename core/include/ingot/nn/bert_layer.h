// BertLayer: one encoder layer of BERT (Devlin et al. 2019) under Hugging Face's BertLayer names —
// attention.self.{query,key,value}, attention.output.{dense,LayerNorm}, intermediate.dense,
// output.{dense,LayerNorm} — post-LayerNorm: a = LN(x + drop(dense(attn(x)))), then
// LN(a + drop(dense(gelu(dense(a))))). Bidirectional attention with a padding mask.
#pragma once

#include <memory>

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

struct BertLayerConfig {
  int64_t dim = 0;
  int64_t heads = 1;
  int64_t intermediate = 0;  ///< the feed-forward width; 0 = 4 * dim
  double dropout = 0.1;      ///< hidden dropout (after each dense) and attention-probability dropout
  double eps = 1e-12;
  std::string activation = "gelu";  ///< BERT's erf GELU
};

class BertLayer : public Module {
 public:
  explicit BertLayer(const BertLayerConfig& config, Generator* gen = nullptr, Generator* dropout_gen = nullptr);
  /// x [B, T, C] -> [B, T, C], attending where the mask set by set_attention_mask allows.
  Tensor forward(const Tensor& x) override;
  /// The mask of the next calls (bool [B, 1, 1, T], true = attend; undefined = everything): kept
  /// by the layer rather than passed, so that the layer stays a one-input module that hooks,
  /// per-block checkpointing (which calls forward again in backward) and quantization see whole.
  void set_attention_mask(const Tensor& mask) { mask_ = mask; }
  /// The generator of the attention-probability dropout (the run's).
  void set_generator(Generator* gen) { dropout_gen_ = gen; }
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  bool is_block() const override { return true; }
  const BertLayerConfig& config() const { return config_; }

 private:
  BertLayerConfig config_;
  Generator* dropout_gen_;
  Tensor mask_;
};

}  // namespace ingot::nn
