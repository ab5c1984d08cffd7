// Transformer modules: shapes and names, the KV cache (token-by-token decoding gives the full
// forward's logits, with learned and rotary positions), post-LayerNorm blocks, the tied head's
// gradient, the context limit, and the YAML preset and layers.
#include <catch2/catch.hpp>

#include "ingot/base/error.h"
#include "ingot/nn/attention.h"
#include "ingot/nn/generate.h"
#include "ingot/nn/gpt.h"
#include "ingot/nn/model_builder.h"
#include "ingot/nn/transformer.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/ops/reduce.h"
#include "test_support.h"

namespace ingot::nn {
namespace {

GptConfig small(bool rotary = false) {
  GptConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.block_size = 12;
  c.vocab_size = 20;
  c.rotary = rotary;
  return c;
}

Tensor ids(const Shape& shape, uint64_t seed, int64_t vocab) {
  return test::random_tensor(shape, DType::F32, seed, 0.0, static_cast<double>(vocab) - 0.51).to(DType::I64);
}

TEST_CASE("gpt: logits [B, T, V], Hugging Face's names, no weight for the tied head", "[nn][gpt]") {
  Generator gen(3);
  Gpt model(small(), &gen);
  CHECK(model.output_shape(Shape{2, 7}) == Shape{2, 7, 20});
  const Tensor logits = model(ids({2, 7}, 1, 20));
  CHECK(logits.shape() == Shape{2, 7, 20});
  std::vector<std::string> names;
  for (const auto& [n, p] : model.named_parameters()) names.push_back(n);
  CHECK(names.front() == "transformer.wte.weight");
  CHECK(names[1] == "transformer.wpe.weight");
  CHECK(std::find(names.begin(), names.end(), "transformer.h.1.attn.c_attn.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "transformer.h.0.mlp.c_proj.bias") != names.end());
  CHECK(names.back() == "transformer.ln_f.bias");
  CHECK(std::none_of(names.begin(), names.end(), [](const std::string& n) { return n.find("lm_head") == 0; }));
  // 16 * 20 + 12 * 16 + 2 * (2 * 32 + 16 * 48 + 48 + 16 * 16 + 16 + 16 * 64 + 64 + 64 * 16 + 16) + 32
  CHECK(model.num_parameters() == 320 + 192 + 2 * (64 + 816 + 272 + 1088 + 1040) + 32);
  CHECK_THROWS_AS(model(ids({1, 13}, 2, 20)), ShapeError);  // past block_size
  CHECK_THROWS_AS(model(Tensor::from_vector(std::vector<float>{1, 2}, {1, 2})), DTypeError);
}

TEST_CASE("gpt: decoding token by token with the KV cache gives the full forward's logits", "[nn][gpt]") {
  for (const bool rotary : {false, true}) {
    INFO("rotary " << rotary);
    Generator gen(5);
    Gpt model(small(rotary), &gen);
    model.eval();
    const Tensor x = ids({2, 9}, 4, 20);
    const Tensor full = model(x);
    std::vector<KvCache> caches;
    // a 4-token prompt, then one token at a time
    Tensor out = model.decode(x.slice(1, 0, 4), caches);
    INGOT_REQUIRE_CLOSE(out, full.slice(1, 0, 4), 1e-5, 1e-5);
    for (int64_t t = 4; t < 9; ++t) {
      out = model.decode(x.slice(1, t, t + 1), caches);
      INGOT_REQUIRE_CLOSE(out, full.slice(1, t, t + 1), 1e-5, 1e-5);
    }
    CHECK(caches[0].length() == 9);
    std::vector<KvCache> more = caches;
    CHECK_THROWS_AS(model.decode(ids({2, 4}, 6, 20), more), ShapeError);  // 13 > block_size
  }
}

TEST_CASE("gpt: the tied embedding gets the gradients of both uses", "[nn][gpt]") {
  Generator gen(8);
  Gpt model(small(), &gen);
  const Tensor x = ids({1, 5}, 9, 20);
  sum(model(x)).backward();
  const Tensor g = model.token_embedding().grad();
  REQUIRE(g.defined());
  // Every row gets the head's gradient; so a row of a token not in x is non-zero too.
  const std::vector<int64_t> used = x.to_vector<int64_t>();
  int64_t unused = 0;
  while (std::find(used.begin(), used.end(), unused) != used.end()) ++unused;
  CHECK(sum(g.slice(0, unused, unused + 1) * g.slice(0, unused, unused + 1)).item() > 0.0);
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    CHECK(p.grad().defined());
  }
}

TEST_CASE("transformer block: pre and post LayerNorm keep [B, T, C], a padding mask hides keys", "[nn][transformer]") {
  for (const bool pre : {true, false}) {
    BlockConfig b;
    b.attention = {8, 2, true, 0.0, false, false, 10000.0};
    b.norm_first = pre;
    b.activation = "gelu";
    Generator gen(2);
    TransformerBlock block(b, &gen);
    const Tensor x = test::random_tensor({2, 5, 8}, DType::F32, 3);
    CHECK(block(x).shape() == Shape{2, 5, 8});
    // Changing a masked-out key position changes nothing at the kept positions.
    const Tensor keep = Tensor::from_vector(std::vector<uint8_t>{1, 1, 1, 0, 0}, {1, 1, 1, 5}).to(DType::Bool);
    Tensor x2 = x.clone();
    x2.slice(1, 4, 5).fill_(7.0);
    const Tensor a = block.run(x, keep, nullptr), c = block.run(x2, keep, nullptr);
    INGOT_REQUIRE_CLOSE(a.slice(1, 0, 3), c.slice(1, 0, 3), 1e-6, 1e-6);
  }
}

TEST_CASE("preset gpt and transformer layers from YAML", "[nn][gpt]") {
  Generator gen(1);
  const YAML::Node m = YAML::Load("{preset: gpt, n_layer: 1, n_head: 2, n_embd: 8, block_size: 6, vocab_size: 11}");
  const ModulePtr model = build_model(m, "m.yaml", gen);
  CHECK(model->output_shape(Shape{3, 6}) == Shape{3, 6, 11});
  const YAML::Node resolved = model_config_yaml(m, "m.yaml");
  CHECK(resolved["dropout"].as<double>() == 0.0);
  CHECK(resolved["rotary"].as<bool>() == false);
  const YAML::Node layers = YAML::Load(R"({layers: [
      {type: embedding, num: 11, dim: 8},
      {type: position_embedding, max_positions: 6, dim: 8},
      {type: transformer_block, dim: 8, heads: 2, norm: post},
      {type: multi_head_attention, dim: 8, heads: 4, rotary: true},
      {type: layernorm, features: 8},
      {type: linear, in: 8, out: 11}]})");
  const ModulePtr seq = build_model(layers, "m.yaml", gen);
  CHECK((*seq)(ids({2, 6}, 1, 11)).shape() == Shape{2, 6, 11});
  CHECK_THROWS_AS(build_model(YAML::Load("{preset: gpt, n_head: 5, n_embd: 8}"), "m.yaml", gen), ConfigError);
}

}  // namespace
}  // namespace ingot::nn

namespace ingot::nn {
namespace {

TEST_CASE("sample_token: greedy, top-k 1 and a tiny top-p all pick the argmax, draws cover the kept set",
          "[nn][generate]") {
  const std::vector<float> logits{0.5f, 2.0f, -1.0f, 1.9f};
  SamplingOptions o;
  o.temperature = 0.0;
  CHECK(sample_token(logits, o, 0.99) == 1);
  o.temperature = 1.0;
  o.top_k = 1;
  CHECK(sample_token(logits, o, 0.99) == 1);
  o.top_k = 0;
  o.top_p = 1e-6;
  CHECK(sample_token(logits, o, 0.99) == 1);
  o.top_p = 1.0;
  o.top_k = 2;  // {1, 3}: p(1) = e^2 / (e^2 + e^1.9) ~ 0.525
  CHECK(sample_token(logits, o, 0.5) == 1);
  CHECK(sample_token(logits, o, 0.53) == 3);
  o.top_k = 0;
  CHECK(sample_token(logits, o, 0.999999) == 2);  // the least likely token is reachable without filters
  o.temperature = -1.0;
  CHECK_THROWS_AS(check_sampling(o), ConfigError);
}

TEST_CASE("generate: greedy decoding through the cache equals the argmax of full forwards", "[nn][generate]") {
  Generator gen(21);
  GptConfig c = small();
  c.block_size = 10;  // short: the context fills and the cache restarts
  Gpt model(c, &gen);
  SamplingOptions o;
  o.temperature = 0.0;
  o.max_tokens = 14;
  const std::vector<int32_t> prompt{3, 1, 4};
  const std::vector<int32_t> out = generate(model, prompt, o);
  REQUIRE(out.size() == 14);
  // The reference: recompute the whole (cropped as generate does) context for every token.
  std::vector<int32_t> all = prompt;
  std::vector<int32_t> expected;
  size_t begin = 0;
  int64_t cached = 0;
  for (int s = 0; s < 14; ++s) {
    if (cached > c.block_size) {  // generate restarted from the last block_size / 2 + 1 tokens
      begin = all.size() - static_cast<size_t>(c.block_size / 2 + 1);
      cached = c.block_size / 2 + 1;
    }
    std::vector<int64_t> window(all.begin() + static_cast<std::ptrdiff_t>(begin), all.end());
    const Tensor logits = model(Tensor::from_vector(window, Shape{1, static_cast<int64_t>(window.size())}));
    const std::vector<float> row = logits.slice(1, logits.size(1) - 1, logits.size(1)).reshape(Shape{-1}).to_vector<float>();
    const auto next = static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    expected.push_back(next);
    all.push_back(next);
    cached = static_cast<int64_t>(all.size() - begin);
  }
  CHECK(out == expected);
  CHECK_THROWS_AS(generate(model, std::vector<int32_t>(11, 1), o), InputError);  // longer than the context
  CHECK_THROWS_AS(generate(model, {}, o), InputError);
  CHECK_THROWS_AS(generate(model, {25}, o), InputError);  // outside the vocabulary
}

}  // namespace
}  // namespace ingot::nn
