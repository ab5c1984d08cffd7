// Bert: the BERT encoder (Devlin et al. 2019) over token ids [B, T] with one of its two heads —
// sequence classification (the pooler's tanh dense layer on [CLS], dropout, a linear classifier:
// logits [B, classes]) or the masked language model (dense, GELU, LayerNorm, a decoder tied to
// the word embeddings plus a bias: logits [B, T, vocab]). Positions holding pad_id are masked out
// of attention. Module names follow Hugging Face's BertForSequenceClassification and
// BertForMaskedLM (bert.embeddings.word_embeddings, bert.encoder.layer.N.attention.self.query,
// ..., classifier / cls.predictions), whose Linear weights are [out, in] as Ingot's; initialised
// as BERT: N(0, 0.02) weights, zero biases, LayerNorm 1 and 0.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/nn/bert_layer.h"
#include "ingot/nn/embedding.h"

namespace ingot::nn {

struct BertConfig {
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_embd = 256;
  int64_t intermediate = 0;  ///< 0 = 4 * n_embd
  int64_t block_size = 512;  ///< max_position_embeddings: the longest sequence
  int64_t vocab_size = 0;
  int64_t type_vocab_size = 2;    ///< segment embeddings (every token is segment 0 here)
  int64_t pad_id = -1;            ///< the padding token, masked out of attention; -1: no padding
  std::string head = "classify";  ///< classify | mlm
  int64_t classes = 2;            ///< classify only
  double dropout = 0.1;           ///< hidden and attention dropout (BERT's 0.1)
  double eps = 1e-12;
};

class Bert : public Module {
 public:
  explicit Bert(const BertConfig& config, Generator* gen = nullptr, Generator* dropout_gen = nullptr);
  /// ids [B, T] (T <= block_size) -> logits [B, classes] (classify) or [B, T, vocab_size] (mlm).
  Tensor forward(const Tensor& ids) override;
  /// The encoder's output [B, T, n_embd] (what either head reads).
  Tensor encode(const Tensor& ids);
  /// bool [B, 1, 1, T]: true where ids is not pad_id; undefined without a pad_id, and when no id
  /// of the batch is pad_id.
  Tensor padding_mask(const Tensor& ids) const;
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  const BertConfig& config() const { return config_; }
  /// cls.predictions.bias, the decoder's bias (mlm; undefined for classify).
  Tensor mlm_bias() const { return lm_bias_; }

 private:
  BertConfig config_;
  std::vector<std::shared_ptr<BertLayer>> layers_;
  Tensor lm_bias_;  // cls.predictions.bias (mlm)
};

}  // namespace ingot::nn
