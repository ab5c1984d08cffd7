// Bert: Hugging Face's names for both heads, padding that changes nothing, per-block checkpointing
// that gives the same gradients, and the YAML preset.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ingot/base/error.h"
#include "ingot/nn/bert.h"
#include "ingot/nn/model_builder.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot::nn {
namespace {

BertConfig small(const std::string& head) {
  BertConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.block_size = 12;
  c.vocab_size = 24;  // 20 ordinary ids, then [PAD] 20, [CLS] 21, [SEP] 22, [MASK] 23
  c.pad_id = 20;
  c.classes = 3;
  c.head = head;
  return c;
}

std::vector<std::string> names_of(const Module& m) {
  std::vector<std::string> names;
  for (const auto& [n, p] : m.named_parameters()) names.push_back(n);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

TEST_CASE("bert: logits per head, Hugging Face's BertForSequenceClassification / BertForMaskedLM names", "[nn][bert]") {
  Generator gen(3);
  Bert classify(small("classify"), &gen);
  CHECK(classify.output_shape(Shape{2, 7}) == Shape{2, 3});
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{21, 1, 2, 3, 22, 20, 20, 21, 5, 6, 7, 8, 9, 22}, {2, 7});
  CHECK(classify(ids).shape() == Shape{2, 3});
  const auto names = names_of(classify);
  CHECK(names.front() == "bert.embeddings.word_embeddings.weight");
  for (const char* n :
       {"bert.embeddings.position_embeddings.weight", "bert.embeddings.token_type_embeddings.weight",
        "bert.embeddings.LayerNorm.weight", "bert.encoder.layer.1.attention.self.query.weight",
        "bert.encoder.layer.0.attention.self.value.bias", "bert.encoder.layer.0.attention.output.dense.weight",
        "bert.encoder.layer.0.attention.output.LayerNorm.bias", "bert.encoder.layer.1.intermediate.dense.weight",
        "bert.encoder.layer.1.output.dense.bias", "bert.encoder.layer.1.output.LayerNorm.weight",
        "bert.pooler.dense.weight", "classifier.weight", "classifier.bias"})
    CHECK(has(names, n));

  Bert mlm(small("mlm"), &gen);
  CHECK(mlm(ids).shape() == Shape{2, 7, 24});
  const auto mlm_names = names_of(mlm);
  for (const char* n :
       {"cls.predictions.bias", "cls.predictions.transform.dense.weight", "cls.predictions.transform.LayerNorm.weight"})
    CHECK(has(mlm_names, n));
  CHECK_FALSE(has(mlm_names, "bert.pooler.dense.weight"));                 // BertForMaskedLM has no pooler
  CHECK_FALSE(has(mlm_names, "cls.predictions.decoder.weight"));           // tied to the word embeddings
  CHECK_THROWS_AS(classify(zeros(Shape{1, 13}, DType::I64)), ShapeError);  // past block_size
}

TEST_CASE("bert: padding after a sequence changes none of its logits", "[nn][bert]") {
  for (const char* head : {"classify", "mlm"}) {
    INFO("head " << head);
    // weights 25 times BERT's initial scale, so that attention is far from uniform and padding
    // that were attended to would show
    const auto sharpen = [](Module& m) {
      for (const auto& [name, p] : m.named_parameters())
        if (p.dim() == 2) p.detach().copy_(p.detach() * 25.0);
    };
    Generator gen(7);
    Bert model(small(head), &gen);
    sharpen(model);
    model.eval();
    const Tensor short_ids = Tensor::from_vector(std::vector<int64_t>{21, 4, 9, 2, 22}, {1, 5});
    const Tensor padded = Tensor::from_vector(std::vector<int64_t>{21, 4, 9, 2, 22, 20, 20, 20}, {1, 8});
    const Tensor a = model(short_ids), b = model(padded);
    if (std::string(head) == "classify")
      INGOT_REQUIRE_CLOSE(b, a, 1e-6, 1e-5);
    else
      INGOT_REQUIRE_CLOSE(b.slice(1, 0, 5), a, 1e-6, 1e-5);
    // and it is the mask that does it: the same ids with no pad_id attend to the padding
    BertConfig unmasked = small(head);
    unmasked.pad_id = -1;
    Generator gen2(7);
    Bert plain(unmasked, &gen2);
    sharpen(plain);
    plain.eval();
    const Tensor c = plain(padded);
    const Tensor diff = max(abs((head == std::string("classify") ? c : c.slice(1, 0, 5)) - a));
    CHECK(diff.item() > 1e-3);
  }
}

TEST_CASE("bert: checkpointing every layer gives the same gradients", "[nn][bert]") {
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{21, 1, 2, 3, 22, 20, 21, 5, 6, 7, 8, 22}, {2, 6});
  std::vector<Tensor> grads[2];
  for (const bool checkpoint : {false, true}) {
    Generator gen(11);
    Bert model(small("classify"), &gen);
    model.eval();  // (no dropout draws to replay)
    if (checkpoint)
      for (auto& [name, m] : model.named_modules())
        if (m->is_block()) m->set_checkpoint(true);
    sum(model(ids)).backward();
    for (const auto& [n, p] : model.named_parameters()) grads[checkpoint ? 1 : 0].push_back(p.grad());
  }
  REQUIRE(grads[0].size() == grads[1].size());
  for (size_t i = 0; i < grads[0].size(); ++i) INGOT_REQUIRE_CLOSE(grads[1][i], grads[0][i], 1e-7, 1e-6);
}

TEST_CASE("preset bert from YAML, its resolved keys, and a missing vocabulary", "[nn][bert]") {
  Generator gen(1);
  const YAML::Node m = YAML::Load(
      "{preset: bert, n_layer: 1, n_head: 2, n_embd: 8, block_size: 6, vocab_size: 11, "
      "pad_id: 7, classes: 4}");
  const ModulePtr model = build_model(m, "m.yaml", gen);
  CHECK(model->output_shape(Shape{3, 6}) == Shape{3, 4});
  const YAML::Node resolved = model_config_yaml(m, "m.yaml");
  CHECK(resolved["head"].as<std::string>() == "classify");
  CHECK(resolved["intermediate"].as<int64_t>() == 32);
  CHECK(resolved["dropout"].as<double>() == 0.1);
  const ModulePtr mlm = build_model(YAML::Load("{preset: bert, n_layer: 1, n_head: 2, n_embd: 8, block_size: 6, "
                                               "vocab_size: 11, head: mlm}"),
                                    "m.yaml", gen);
  CHECK(mlm->output_shape(Shape{3, 6}) == Shape{3, 6, 11});
  CHECK_THROWS_AS(build_model(YAML::Load("{preset: bert, n_embd: 8}"), "m.yaml", gen), ConfigError);  // no vocab
  CHECK_THROWS_AS(build_model(YAML::Load("{preset: bert, vocab_size: 9, head: decoder}"), "m.yaml", gen), ConfigError);
}

}  // namespace
}  // namespace ingot::nn
