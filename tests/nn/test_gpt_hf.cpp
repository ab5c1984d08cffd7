// A GPT saved in GPT-2's format loads strictly into transformers' GPT2LMHeadModel built from the
// written config.json (no hub download), gives the same logits, and its greedy generate() gives
// the tokens Ingot's KV-cache generation gives. Needs torch and transformers: the bench venv
// (build/torch-venv, see bench/compare); reported skipped without it, as in CI.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "ingot/io/hf_gpt2.h"
#include "ingot/nn/generate.h"
#include "ingot/nn/gpt.h"
#include "test_support.h"

namespace ingot {
namespace {

TEST_CASE("gpt in GPT-2's format: strict load into GPT2LMHeadModel, same logits, same greedy tokens", "[nn][gpt][hf]") {
  const std::string python = INGOT_TORCH_PYTHON;
  if (!test::transformers_or_skip(python)) return;
  nn::GptConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.block_size = 24;
  c.vocab_size = 30;
  Generator gen(4);
  nn::Gpt model(c, &gen);
  model.eval();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("ingot_gpt_hf_{}", ::getpid());
  io::save_gpt2(model, dir);
  const std::vector<int64_t> ids{3, 7, 1, 29, 0, 12, 5};
  const std::vector<int32_t> prompt{2, 9, 4};
  nn::SamplingOptions greedy;
  greedy.temperature = 0.0;
  greedy.max_tokens = 15;
  const std::vector<int32_t> ours = nn::generate(model, prompt, greedy);
  const std::string out =
      test::capture(fmt::format("{} {} {} '{}' '{}' {}", python, INGOT_GPT_HF_PY, dir.string(),
                                nlohmann::json(ids).dump(), nlohmann::json(prompt).dump(), greedy.max_tokens));
  std::filesystem::remove_all(dir);
  REQUIRE(!out.empty());  // (the script failed: strict loading refused a name or a shape)
  const auto j = nlohmann::json::parse(out);
  const std::vector<std::vector<float>> theirs = j.at("logits");
  const Tensor logits = model(Tensor::from_vector(ids, Shape{1, static_cast<int64_t>(ids.size())}));
  std::vector<float> flat;
  for (const auto& row : theirs) flat.insert(flat.end(), row.begin(), row.end());
  INGOT_REQUIRE_CLOSE(logits.reshape(Shape{-1}), Tensor::from_vector(flat, Shape{static_cast<int64_t>(flat.size())}),
                      1e-5, 1e-4);
  CHECK(j.at("generated").get<std::vector<int32_t>>() == ours);
  model.train();
}

}  // namespace
}  // namespace ingot
