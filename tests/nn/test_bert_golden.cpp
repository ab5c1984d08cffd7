// Bert against a BERT written in torch under Hugging Face's names (tests/golden/make_bert.py): for
// the classification and the masked-language-model heads, the same initial weights and padded
// batches give the same logits and gradients at step 0 and the same losses over 100 AdamW steps —
// on every CPU backend in turn.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "golden_adamw.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/bert.h"
#include "ingot/nn/loss.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

void check_head(const std::string& head) {
  const io::SafetensorsFile file = io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "bert.safetensors");
  const auto cfg = nlohmann::json::parse(file.metadata.at("config"));
  const auto opt = nlohmann::json::parse(file.metadata.at("optimizer"));
  const double spread = std::stod(file.metadata.at(head + ".thread_spread"));
  nn::BertConfig c;
  c.n_layer = cfg.at("n_layer");
  c.n_head = cfg.at("n_head");
  c.n_embd = cfg.at("n_embd");
  c.intermediate = cfg.at("intermediate");
  c.block_size = cfg.at("block_size");
  c.vocab_size = cfg.at("vocab_size");
  c.pad_id = cfg.at("pad_id");
  c.classes = cfg.at("classes");
  c.eps = cfg.at("eps");
  c.head = head;
  c.dropout = 0.0;
  std::map<std::string, Tensor> init;
  const std::string prefix = head + ".";
  for (const auto& [name, t] : file.tensors)
    if (name.rfind(prefix + "init.", 0) == 0) init[name.substr(prefix.size() + 5)] = t;
  const auto expected = file.tensors.at(prefix + "losses").to_vector<double>();
  test::RestoreBackends restore;
  for (const std::string& backend : test::cpu_backends()) {
    BackendRegistry::instance().restrict_to({backend});
    INFO("head " << head << ", backend " << backend << ", torch " << file.metadata.at("torch"));
    nn::Bert model(c);
    model.load_state_dict(init);  // strict: every name of torch's model, and no other
    optim::AdamW adamw(model.parameters(), test::adamw_options(opt));
    nn::CrossEntropyOptions ce;
    ce.classes_last = true;
    double worst = 0.0;
    for (size_t s = 0; s < expected.size(); ++s) {
      const Tensor& x = file.tensors.at(fmt::format("{}batch.{}.x", prefix, s));
      const Tensor& y = file.tensors.at(fmt::format("{}batch.{}.y", prefix, s));
      const Tensor logits = model(x);
      const Tensor loss = nn::cross_entropy(logits, y, ce);
      adamw.zero_grad();
      loss.backward();
      if (s == 0) {
        // f32, the same formulas summed in other orders: 1e-5 relative (1e-6 absolute near zero).
        INGOT_REQUIRE_CLOSE(logits, file.tensors.at(prefix + "step0.logits"), 1e-6, 1e-5);
        for (const auto& [name, p] : model.named_parameters()) {
          INFO("gradient of " << name);
          INGOT_REQUIRE_CLOSE(p.grad(), file.tensors.at(prefix + "step0.grad." + name), 1e-6, 1e-5);
        }
      }
      adamw.step();
      worst = std::max(worst, std::abs(loss.item() - expected[s]));
    }
    // 1e-4 (the bound) or torch's own spread between thread counts, if larger.
    INFO("largest loss difference " << worst << " over " << expected.size() << " steps; torch's own spread " << spread);
    CHECK(worst <= std::max(1e-4, spread));
  }
}

TEST_CASE("bert classifier matches torch: step-0 logits and gradients, 100 AdamW steps of loss", "[nn][bert][golden]") {
  check_head("classify");
  // the fixture trains: the comparison is not between two untrained models
  const io::SafetensorsFile file = io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "bert.safetensors");
  const auto losses = file.tensors.at("classify.losses").to_vector<double>();
  double first = 0.0, last = 0.0;
  for (size_t i = 0; i < 10; ++i) {
    first += losses[i];
    last += losses[losses.size() - 1 - i];
  }
  CHECK(last < 0.7 * first);
}

TEST_CASE("bert masked language model matches torch: step-0 logits and gradients, 100 AdamW steps of loss",
          "[nn][bert][golden]") {
  check_head("mlm");
}

}  // namespace
}  // namespace ingot
