// PositionEmbedding and TransformerBlock. The block calls its children through operator(), so
// hooks, quantization's swapped Linear layers and checkpointing see them.
#include "ingot/nn/transformer.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/init.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {

PositionEmbedding::PositionEmbedding(int64_t max_positions, int64_t dim, double std, Generator* gen)
    : Module("PositionEmbedding"), max_(max_positions), dim_(dim) {
  INGOT_CHECK_SHAPE(max_ >= 1 && dim_ >= 1, "PositionEmbedding: {} positions of {} must both be >= 1", max_, dim_);
  register_parameter("weight", init::normal(Shape{max_, dim_}, 0.0, std, init::generator_or_default(gen)));
}

Tensor PositionEmbedding::add_at(const Tensor& x, int64_t offset) const {
  INGOT_CHECK_SHAPE(x.dim() == 3 && x.size(2) == dim_, "PositionEmbedding({}, {}): input {} must be [B, T, {}]", max_,
                    dim_, x.shape().str(), dim_);
  const int64_t t = x.size(1);
  INGOT_CHECK_SHAPE(offset >= 0 && offset + t <= max_,
                    "PositionEmbedding: positions {} to {} are past the model's context of {} tokens (block_size)",
                    offset, offset + t - 1, max_);
  return x + tensor("weight").slice(0, offset, offset + t).to(x.dtype());
}

Shape PositionEmbedding::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 3 && input[2] == dim_ && input[1] <= max_,
                    "PositionEmbedding({}, {}) expects [B, T <= {}, {}], the input is {}: a sequence longer than the "
                    "model's context",
                    max_, dim_, max_, dim_, input.str());
  return input;
}

std::string PositionEmbedding::extra_repr() const { return fmt::format("{}, {}", max_, dim_); }

TransformerBlock::TransformerBlock(const BlockConfig& config, Generator* gen, Generator* dropout_gen)
    : Module("TransformerBlock"), config_(config) {
  const int64_t dim = config_.attention.dim;
  const int64_t hidden = config_.hidden > 0 ? config_.hidden : 4 * dim;
  config_.hidden = hidden;
  register_module("ln_1", std::make_shared<LayerNorm>(Shape{dim}, config_.eps));
  register_module("attn", std::make_shared<MultiheadAttention>(config_.attention, gen, dropout_gen));
  register_module("ln_2", std::make_shared<LayerNorm>(Shape{dim}, config_.eps));
  auto mlp = std::make_shared<Sequential>();
  mlp->push_back("c_fc", std::make_shared<Linear>(dim, hidden, config_.attention.bias, gen));
  mlp->push_back("act", make_activation(config_.activation));
  mlp->push_back("c_proj", std::make_shared<Linear>(hidden, dim, config_.attention.bias, gen));
  mlp->push_back("dropout", std::make_shared<Dropout>(config_.attention.dropout, dropout_gen));
  register_module("mlp", mlp);
}

Tensor TransformerBlock::run(const Tensor& x, const Tensor& mask, KvCache* cache) {
  // (by name: a child swapped by replace_child runs; attn stays a MultiheadAttention)
  Module &ln_1 = *get_submodule("ln_1"), &ln_2 = *get_submodule("ln_2"), &mlp = *get_submodule("mlp");
  auto* attn = dynamic_cast<MultiheadAttention*>(get_submodule("attn").get());
  INGOT_CHECK(attn != nullptr, "TransformerBlock: its attn was replaced by a {}", get_submodule("attn")->type_name());
  if (config_.norm_first) {
    const Tensor h = x + attn->attend(ln_1(x), mask, cache);
    return h + mlp(ln_2(h));
  }
  const Tensor h = ln_1(x + attn->attend(x, mask, cache));
  return ln_2(h + mlp(h));
}

Shape TransformerBlock::output_shape(const Shape& input) const {
  return get_submodule("mlp")->output_shape(get_submodule("attn")->output_shape(input));
}

std::string TransformerBlock::extra_repr() const {
  return fmt::format("dim={}, heads={}, hidden={}, norm={}", config_.attention.dim, config_.attention.heads,
                     config_.hidden, config_.norm_first ? "pre" : "post");
}

}  // namespace ingot::nn
