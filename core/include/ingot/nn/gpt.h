// Gpt: the GPT-2 language model (Radford et al. 2019) — token and learned position embeddings,
// pre-LayerNorm transformer blocks, a final LayerNorm and an output head tied to the token
// embedding — over token ids [B, T] to logits [B, T, vocab]. Module names follow Hugging Face's
// GPT2LMHeadModel (transformer.wte, transformer.wpe, transformer.h.N.attn.c_attn, ...,
// transformer.ln_f); the head has no weight of its own. Initialised as GPT-2: N(0, 0.02), the
// residual projections N(0, 0.02 / sqrt(2 n_layer)), zero biases.
#pragma once

#include <memory>
#include <vector>

#include "ingot/nn/embedding.h"
#include "ingot/nn/transformer.h"

namespace ingot::nn {

struct GptConfig {
  int64_t n_layer = 6;
  int64_t n_head = 6;
  int64_t n_embd = 384;
  int64_t block_size = 256;  ///< the context: the most positions the model sees
  int64_t vocab_size = 256;
  bool bias = true;
  double dropout = 0.0;
  bool rotary = false;  ///< rotary q/k embeddings instead of the learned wpe
  double eps = 1e-5;
};

class Gpt : public Module {
 public:
  explicit Gpt(const GptConfig& config, Generator* gen = nullptr, Generator* dropout_gen = nullptr);
  /// ids [B, T] (any integer dtype, T <= block_size) -> logits [B, T, vocab_size].
  Tensor forward(const Tensor& ids) override;
  /// Incremental decoding: `ids` [B, T] are the positions after those `caches` holds (one cache
  /// per block, empty at the start; extended here). The logits of the new positions only.
  Tensor decode(const Tensor& ids, std::vector<KvCache>& caches);
  Shape output_shape(const Shape& input) const override;
  std::string extra_repr() const override;
  const GptConfig& config() const { return config_; }
  /// The token embedding, which is also the output head's weight.
  Tensor token_embedding() const;

 private:
  Tensor run(const Tensor& ids, std::vector<KvCache>* caches);

  GptConfig config_;
  std::shared_ptr<Embedding> wte_;
  std::shared_ptr<PositionEmbedding> wpe_;
  std::shared_ptr<Module> drop_, ln_f_;
  std::vector<std::shared_ptr<TransformerBlock>> blocks_;
};

}  // namespace ingot::nn
