// Gpt against a GPT-2 written in torch (tests/golden/make_gpt.py): the same initial weights and
// batches give the same logits and gradients at step 0, and the same losses over 100 AdamW steps
// — on every CPU backend in turn.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "golden_adamw.h"
#include "ingot/io/safetensors.h"
#include "ingot/nn/gpt.h"
#include "ingot/nn/loss.h"
#include "ingot/runtime/registry.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("gpt matches torch: step-0 logits and gradients, 100 AdamW steps of loss", "[nn][gpt][golden]") {
  const io::SafetensorsFile file = io::load_safetensors(std::filesystem::path(INGOT_GOLDEN_DIR) / "gpt.safetensors");
  const auto cfg = nlohmann::json::parse(file.metadata.at("config"));
  const auto opt = nlohmann::json::parse(file.metadata.at("optimizer"));
  const double spread = std::stod(file.metadata.at("thread_spread"));
  nn::GptConfig c;
  c.n_layer = cfg.at("n_layer");
  c.n_head = cfg.at("n_head");
  c.n_embd = cfg.at("n_embd");
  c.block_size = cfg.at("block_size");
  c.vocab_size = cfg.at("vocab_size");
  c.bias = cfg.at("bias");
  std::map<std::string, Tensor> init;
  for (const auto& [name, t] : file.tensors)
    if (name.rfind("init.", 0) == 0) init[name.substr(5)] = t;
  const Tensor& torch_losses = file.tensors.at("losses");
  const auto expected = torch_losses.to_vector<double>();
  test::RestoreBackends restore;
  for (const std::string& backend : test::cpu_backends()) {
    BackendRegistry::instance().restrict_to({backend});
    INFO("backend " << backend << ", torch " << file.metadata.at("torch"));
    nn::Gpt model(c);
    model.load_state_dict(init);  // strict: every name of torch's model, and no other
    optim::AdamW adamw(model.parameters(), test::adamw_options(opt));
    nn::CrossEntropyOptions ce;
    ce.classes_last = true;
    double worst = 0.0;
    for (size_t s = 0; s < expected.size(); ++s) {
      const Tensor& x = file.tensors.at(fmt::format("batch.{}.x", s));
      const Tensor& y = file.tensors.at(fmt::format("batch.{}.y", s));
      const Tensor logits = model(x);
      const Tensor loss = nn::cross_entropy(logits, y, ce);
      adamw.zero_grad();
      loss.backward();
      if (s == 0) {
        // f32, the same formulas summed in other orders: 1e-5 relative (and 1e-6 absolute for
        // values near zero), as the issue asks.
        INGOT_REQUIRE_CLOSE(logits, file.tensors.at("step0.logits"), 1e-6, 1e-5);
        for (const auto& [name, p] : model.named_parameters()) {
          INFO("gradient of " << name);
          INGOT_REQUIRE_CLOSE(p.grad(), file.tensors.at("step0.grad." + name), 1e-6, 1e-5);
        }
      }
      adamw.step();
      worst = std::max(worst, std::abs(loss.item() - expected[s]));
    }
    // 1e-4 (the bound) or torch's own spread between thread counts, if larger.
    INFO("largest loss difference " << worst << " over " << expected.size() << " steps; torch's own spread " << spread);
    CHECK(worst <= std::max(1e-4, spread));
    CHECK(expected.back() < expected.front() - 1.0);  // the fixture trains: the check is not vacuous
  }
}

}  // namespace
}  // namespace ingot
