// Gpt: embeddings, blocks (each through operator(), so that per-block checkpointing and hooks
// apply while training), ln_f, and the tied head as one matmul with the token embedding.
#include "ingot/nn/gpt.h"

#include <fmt/format.h>

#include <cmath>

#include "ingot/base/error.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/init.h"
#include "ingot/ops/linalg.h"

namespace ingot::nn {
namespace {

/// GPT-2's initialisation, drawn in registration order from `gen`.
void init_gpt(Module& model, const GptConfig& c, Generator& gen) {
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.n_layer));
  for (const auto& [name, p] : model.named_parameters()) {
    if (name.find(".ln_") != std::string::npos) continue;  // LayerNorm: weight 1, bias 0 already
    if (name.ends_with(".bias")) {
      p.detach().fill_(0.0);
      continue;
    }
    p.detach().copy_(init::normal(p.shape(), 0.0, name.ends_with("c_proj.weight") ? proj_std : 0.02, gen));
  }
}

}  // namespace

Gpt::Gpt(const GptConfig& config, Generator* gen, Generator* dropout_gen) : Module("GPT"), config_(config) {
  const GptConfig& c = config_;
  INGOT_CHECK_AS(c.n_layer >= 1 && c.n_head >= 1 && c.n_embd >= 1 && c.block_size >= 1 && c.vocab_size >= 1,
                 ConfigError, "gpt: n_layer {}, n_head {}, n_embd {}, block_size {}, vocab_size {} must all be >= 1",
                 c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size);
  INGOT_CHECK_AS(c.n_embd % c.n_head == 0, ConfigError, "gpt: n_embd {} must be a multiple of n_head {}", c.n_embd,
                 c.n_head);
  Generator& g = init::generator_or_default(gen);
  auto body = std::make_shared<Module>("GPT2Model");
  wte_ = body->register_module("wte", std::make_shared<Embedding>(c.vocab_size, c.n_embd, &g));
  if (!c.rotary) wpe_ = body->register_module("wpe", std::make_shared<PositionEmbedding>(c.block_size, c.n_embd, 0.02, &g));
  drop_ = body->register_module("drop", std::make_shared<Dropout>(c.dropout, dropout_gen));
  auto h = std::make_shared<Module>("ModuleList");
  BlockConfig block;
  block.attention = {c.n_embd, c.n_head, c.bias, c.dropout, true, c.rotary, 10000.0};
  block.eps = c.eps;
  for (int64_t i = 0; i < c.n_layer; ++i)
    blocks_.push_back(h->register_module(std::to_string(i), std::make_shared<TransformerBlock>(block, &g, dropout_gen)));
  body->register_module("h", h);
  ln_f_ = body->register_module("ln_f", std::make_shared<LayerNorm>(Shape{c.n_embd}, c.eps));
  register_module("transformer", body);
  init_gpt(*this, c, g);
}

Tensor Gpt::token_embedding() const { return wte_->weight(); }

Tensor Gpt::forward(const Tensor& ids) { return run(ids, nullptr); }

Tensor Gpt::decode(const Tensor& ids, std::vector<KvCache>& caches) {
  if (caches.empty()) caches.resize(blocks_.size());
  INGOT_CHECK(caches.size() == blocks_.size(), "gpt: {} caches for {} blocks", caches.size(), blocks_.size());
  return run(ids, &caches);
}

Tensor Gpt::run(const Tensor& ids, std::vector<KvCache>* caches) {
  INGOT_CHECK_SHAPE(ids.dim() == 2, "gpt: input {} must be token ids [B, T]", ids.shape().str());
  const int64_t past = caches != nullptr ? (*caches)[0].length() : 0;
  INGOT_CHECK_SHAPE(past + ids.size(1) <= config_.block_size,
                    "gpt: {} positions are more than the model's context of {} tokens (block_size): shorten the "
                    "sequence, or train a model with a larger block_size",
                    past + ids.size(1), config_.block_size);
  Tensor x = (*wte_)(ids);
  if (wpe_) x = wpe_->add_at(x, past);
  x = (*drop_)(x);
  for (size_t i = 0; i < blocks_.size(); ++i)
    x = caches != nullptr ? blocks_[i]->run(x, Tensor(), &(*caches)[i]) : (*blocks_[i])(x);
  x = (*ln_f_)(x);
  return linear(x, wte_->weight().to(x.dtype()));
}

Shape Gpt::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 2 && input[1] <= config_.block_size,
                    "gpt expects token ids [B, T <= {}] (block_size), the input is {}", config_.block_size,
                    input.str());
  return Shape{input[0], input[1], config_.vocab_size};
}

std::string Gpt::extra_repr() const {
  return fmt::format("n_layer={}, n_head={}, n_embd={}, block_size={}, vocab_size={}", config_.n_layer, config_.n_head,
                     config_.n_embd, config_.block_size, config_.vocab_size);
}

}  // namespace ingot::nn
