// Bert: embeddings (word + position + segment 0, LayerNorm, dropout), the layers (each through
// operator(), so that per-block checkpointing and hooks apply), and the head.
#include "ingot/nn/bert.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/nn/activation.h"
#include "ingot/nn/dropout.h"
#include "ingot/nn/init.h"
#include "ingot/nn/layer_norm.h"
#include "ingot/nn/linear.h"
#include "ingot/nn/transformer.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/linalg.h"
#include "ingot/ops/reduce.h"
#include "ingot/runtime/op_recorder.h"

namespace ingot::nn {
namespace {

/// BERT's initialisation (Hugging Face's _init_weights), drawn in registration order from `gen`.
void init_bert(Module& model, Generator& gen) {
  for (const auto& [name, p] : model.named_parameters()) {
    if (name.find("LayerNorm.") != std::string::npos) continue;  // weight 1, bias 0 already
    if (name.ends_with("bias")) {
      p.detach().fill_(0.0);
      continue;
    }
    p.detach().copy_(init::normal(p.shape(), 0.0, 0.02, gen));
  }
}

}  // namespace

Bert::Bert(const BertConfig& config, Generator* gen, Generator* dropout_gen) : Module("Bert"), config_(config) {
  BertConfig& c = config_;
  INGOT_CHECK_AS(c.n_layer >= 1 && c.n_head >= 1 && c.n_embd >= 1 && c.block_size >= 1 && c.vocab_size >= 1,
                 ConfigError, "bert: n_layer {}, n_head {}, n_embd {}, block_size {}, vocab_size {} must all be >= 1",
                 c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size);
  INGOT_CHECK_AS(c.n_embd % c.n_head == 0, ConfigError, "bert: n_embd {} must be a multiple of n_head {}", c.n_embd,
                 c.n_head);
  INGOT_CHECK_AS(c.head == "classify" || c.head == "mlm", ConfigError, "bert: head {} is not classify or mlm", c.head);
  INGOT_CHECK_AS(c.head != "classify" || c.classes >= 1, ConfigError, "bert: classes {} must be >= 1", c.classes);
  INGOT_CHECK_AS(c.pad_id < c.vocab_size, ConfigError, "bert: pad_id {} is outside the vocabulary of {}", c.pad_id,
                 c.vocab_size);
  if (c.intermediate <= 0) c.intermediate = 4 * c.n_embd;
  Generator& g = init::generator_or_default(gen);
  auto body = register_module("bert", std::make_shared<Module>("BertModel"));
  auto emb = body->register_module("embeddings", std::make_shared<Module>("BertEmbeddings"));
  emb->register_module("word_embeddings", std::make_shared<Embedding>(c.vocab_size, c.n_embd, &g));
  emb->register_module("position_embeddings", std::make_shared<PositionEmbedding>(c.block_size, c.n_embd, 0.02, &g));
  emb->register_module("token_type_embeddings", std::make_shared<Embedding>(c.type_vocab_size, c.n_embd, &g));
  emb->register_module("LayerNorm", std::make_shared<LayerNorm>(Shape{c.n_embd}, c.eps));
  emb->register_module("dropout", std::make_shared<Dropout>(c.dropout, dropout_gen));
  auto encoder = body->register_module("encoder", std::make_shared<Module>("BertEncoder"));
  auto list = encoder->register_module("layer", std::make_shared<Module>("ModuleList"));
  const BertLayerConfig layer{c.n_embd, c.n_head, c.intermediate, c.dropout, c.eps, "gelu"};
  for (int64_t i = 0; i < c.n_layer; ++i)
    layers_.push_back(list->register_module(std::to_string(i), std::make_shared<BertLayer>(layer, &g, dropout_gen)));
  if (c.head == "classify") {
    auto pooler = body->register_module("pooler", std::make_shared<Module>("BertPooler"));
    pooler->register_module("dense", std::make_shared<Linear>(c.n_embd, c.n_embd, true, &g));
    register_module("dropout", std::make_shared<Dropout>(c.dropout, dropout_gen));
    register_module("classifier", std::make_shared<Linear>(c.n_embd, c.classes, true, &g));
  } else {
    auto predictions = register_module("cls", std::make_shared<Module>("BertOnlyMLMHead"))
                           ->register_module("predictions", std::make_shared<Module>("BertLMPredictionHead"));
    lm_bias_ = predictions->register_parameter("bias", zeros(Shape{c.vocab_size}, DType::F32));
    auto transform = predictions->register_module("transform", std::make_shared<Module>("BertPredictionHeadTransform"));
    transform->register_module("dense", std::make_shared<Linear>(c.n_embd, c.n_embd, true, &g));
    transform->register_module("transform_act_fn", make_activation("gelu"));
    transform->register_module("LayerNorm", std::make_shared<LayerNorm>(Shape{c.n_embd}, c.eps));
  }
  init_bert(*this, g);
}

Tensor Bert::padding_mask(const Tensor& ids) const {
  if (config_.pad_id < 0) return Tensor();
  const Tensor keep = ne(ids, Scalar(config_.pad_id));
  // A batch without padding attends without a mask (the faster kernel), as transformers does;
  // a step being captured keeps the mask, since its replays see other batches.
  if (!is_recording() && min(keep.to(DType::I32)).item() != 0.0) return Tensor();
  return keep.reshape(Shape{ids.size(0), 1, 1, ids.size(1)});
}

Tensor Bert::encode(const Tensor& ids) {
  INGOT_CHECK_SHAPE(ids.dim() == 2, "bert: input {} must be token ids [B, T]", ids.shape().str());
  INGOT_CHECK_SHAPE(ids.size(1) <= config_.block_size,
                    "bert: {} positions are more than the model's {} (block_size): shorten the sequences "
                    "(data.text_classification.max_length), or train a model with a larger block_size",
                    ids.size(1), config_.block_size);
  const auto sub = [&](const char* path) -> Module& { return *get_submodule(path); };
  const auto& types = static_cast<const Embedding&>(sub("bert.embeddings.token_type_embeddings"));
  Tensor x = sub("bert.embeddings.word_embeddings")(ids);
  x = static_cast<const PositionEmbedding&>(sub("bert.embeddings.position_embeddings")).add_at(x, 0);
  x = x + types.weight().slice(0, 0, 1).to(x.dtype());  // every token in segment 0
  x = sub("bert.embeddings.dropout")(sub("bert.embeddings.LayerNorm")(x));
  const Tensor mask = padding_mask(ids);
  for (const auto& layer : layers_) {
    layer->set_attention_mask(mask);
    x = (*layer)(x);
  }
  return x;
}

Tensor Bert::forward(const Tensor& ids) {
  const Tensor x = encode(ids);
  const auto sub = [&](const char* path) -> Module& { return *get_submodule(path); };
  if (config_.head == "classify") {
    const Tensor cls = x.slice(1, 0, 1).reshape(Shape{x.size(0), config_.n_embd});  // [CLS]'s state
    const Tensor pooled = tanh(sub("bert.pooler.dense")(cls));
    return sub("classifier")(sub("dropout")(pooled));
  }
  const Tensor h = sub("cls.predictions.transform.LayerNorm")(
      sub("cls.predictions.transform.transform_act_fn")(sub("cls.predictions.transform.dense")(x)));
  // the decoder: the word embeddings (tied) and the head's own bias
  const Tensor w = static_cast<const Embedding&>(sub("bert.embeddings.word_embeddings")).weight();
  return linear(h, w.to(h.dtype()), lm_bias_.to(h.dtype()));
}

Shape Bert::output_shape(const Shape& input) const {
  INGOT_CHECK_SHAPE(input.size() == 2 && input[1] <= config_.block_size,
                    "bert expects token ids [B, T <= {}] (block_size), the input is {}", config_.block_size,
                    input.str());
  if (config_.head == "classify") return Shape{input[0], config_.classes};
  return Shape{input[0], input[1], config_.vocab_size};
}

std::string Bert::extra_repr() const {
  return fmt::format("n_layer={}, n_head={}, n_embd={}, block_size={}, vocab_size={}, head={}", config_.n_layer,
                     config_.n_head, config_.n_embd, config_.block_size, config_.vocab_size, config_.head);
}

}  // namespace ingot::nn
