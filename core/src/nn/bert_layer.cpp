// BertLayer: three projections to q, k and v per head, the fused attention op (no causal mask),
// and the two post-LayerNorm residual blocks. Children are looked up by name on each call, so a
// layer swapped by replace_child (quantization's int8 Linear) is the one that runs.
#include "ingot/nn/bert_layer.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/layer_norm.h"
#include "ingot/nn/linear.h"
#include "ingot/ops/attention.h"
#include "ingot/ops/elementwise.h"

namespace ingot::nn {
namespace {

/// A container of named children, as Hugging Face nests them (attention.self, attention.output).
std::shared_ptr<Module> group(const char* type) { return std::make_shared<Module>(type); }

}  // namespace

BertLayer::BertLayer(const BertLayerConfig& config, Generator* gen, Generator* dropout_gen)
    : Module("BertLayer"), config_(config), dropout_gen_(dropout_gen) {
  const int64_t c = config_.dim;
  INGOT_CHECK_SHAPE(c >= 1 && config_.heads >= 1 && c % config_.heads == 0,
                    "BertLayer: dim {} must be a positive multiple of heads {}", c, config_.heads);
  INGOT_CHECK(config_.dropout >= 0.0 && config_.dropout < 1.0, "BertLayer: dropout {} is not in [0, 1)",
              config_.dropout);
  if (config_.intermediate <= 0) config_.intermediate = 4 * c;
  auto attention = register_module("attention", group("BertAttention"));
  auto self = attention->register_module("self", group("BertSelfAttention"));
  for (const char* name : {"query", "key", "value"})
    self->register_module(name, std::make_shared<Linear>(c, c, true, gen));
  auto attn_out = attention->register_module("output", group("BertSelfOutput"));
  attn_out->register_module("dense", std::make_shared<Linear>(c, c, true, gen));
  attn_out->register_module("LayerNorm", std::make_shared<LayerNorm>(Shape{c}, config_.eps));
  attn_out->register_module("dropout", std::make_shared<Dropout>(config_.dropout, dropout_gen));
  auto intermediate = register_module("intermediate", group("BertIntermediate"));
  intermediate->register_module("dense", std::make_shared<Linear>(c, config_.intermediate, true, gen));
  intermediate->register_module("intermediate_act_fn", make_activation(config_.activation));
  auto out = register_module("output", group("BertOutput"));
  out->register_module("dense", std::make_shared<Linear>(config_.intermediate, c, true, gen));
  out->register_module("LayerNorm", std::make_shared<LayerNorm>(Shape{c}, config_.eps));
  out->register_module("dropout", std::make_shared<Dropout>(config_.dropout, dropout_gen));
}

Tensor BertLayer::forward(const Tensor& x) {
  INGOT_CHECK_SHAPE(x.dim() == 3 && x.size(2) == config_.dim, "BertLayer({}): input {} must be [B, T, {}]", config_.dim,
                    x.shape().str(), config_.dim);
  const int64_t b = x.size(0), t = x.size(1), h = config_.heads, d = config_.dim / h;
  const auto sub = [&](const char* path) -> Module& { return *get_submodule(path); };
  // [B, T, C] -> [B, H, T, D] as a strided view the attention op reads in place
  const auto heads = [&](const Tensor& y) { return y.reshape(Shape{b, t, h, d}).permute({0, 2, 1, 3}); };
  AttentionOptions o;
  o.causal = CausalMask::None;
  o.mask = mask_;
  o.dropout_p = is_training() ? config_.dropout : 0.0;
  o.gen = dropout_gen_;
  const Tensor y =
      scaled_dot_product_attention(heads(sub("attention.self.query")(x)), heads(sub("attention.self.key")(x)),
                                   heads(sub("attention.self.value")(x)), o);
  const Tensor merged = y.permute({0, 2, 1, 3}).reshape(Shape{b, t, config_.dim});
  const Tensor a =
      sub("attention.output.LayerNorm")(sub("attention.output.dropout")(sub("attention.output.dense")(merged)) + x);
  const Tensor i = sub("intermediate.intermediate_act_fn")(sub("intermediate.dense")(a));
  return sub("output.LayerNorm")(sub("output.dropout")(sub("output.dense")(i)) + a);
}

Shape BertLayer::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 3 && input[2] == config_.dim, "BertLayer({}) expects [B, T, {}], the input is {}",
                    config_.dim, config_.dim, input.str());
  return input;
}

std::string BertLayer::extra_repr() const {
  return fmt::format("dim={}, heads={}, intermediate={}, dropout={}", config_.dim, config_.heads, config_.intermediate,
                     config_.dropout);
}

}  // namespace ingot::nn
