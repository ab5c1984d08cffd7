// ONNX export of the transformer layers against onnxruntime: a small GPT (learned positions, and
// rotary) exported once with a dynamic T runs at T = 5 and T = block_size within 1e-4 of its own
// forward; a post-LayerNorm, non-causal block; and what the exporter refuses, with its message.
#include <catch2/catch.hpp>

#include "ingot/base/error.h"
#include "ingot/nn/gpt.h"
#include "ingot/nn/transformer.h"
#include "io_test_util.h"
#include "onnx_test_util.h"
#include "test_support.h"

using namespace ingot;
using ingot::test::forward;
using ingot::test::random_tensor;

namespace {

constexpr double kTol = 1e-4;

nn::GptConfig small_gpt(bool rotary) {
  nn::GptConfig c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.block_size = 12;
  c.vocab_size = 20;
  c.dropout = 0.1;  // off in eval, and so in the file
  c.rotary = rotary;
  return c;
}

io::onnx::ExportOptions token_options(int64_t block_size) {
  io::onnx::ExportOptions o;
  o.input = io::onnx::InputKind::TokenIds;
  o.input_shape = Shape{block_size};
  o.tokenizer = "byte";
  o.run_name = "tiny_gpt";
  return o;
}

// Biases and LayerNorm affine parameters away from GPT-2's zeros and ones, so that each is seen.
void randomize(nn::Module& model) {
  uint64_t seed = 200;
  for (const auto& [name, t] : model.named_parameters())
    if (t.dim() == 1) t.detach().copy_(random_tensor(t.shape(), DType::F32, ++seed, -0.5, 1.5));
}

// One export of `gpt`, run by onnxruntime at each T in `lengths`.
void check_gpt(nn::Gpt& gpt, const std::vector<int64_t>& lengths) {
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  gpt.eval();
  const int64_t block = gpt.config().block_size;
  const io::onnx::ExportResult r = io::onnx::export_onnx(gpt, token_options(block));
  CHECK((r.output_shape == Shape{1, block, gpt.config().vocab_size}));
  const ingot::test::ScratchDir dir;
  ingot::test::write_bytes(dir / "model.onnx", r.bytes);
  for (int64_t t : lengths) {
    INFO("T = " << t);
    const Tensor ids = random_tensor(Shape{3, t}, DType::I64, 10 + t, 0, gpt.config().vocab_size - 0.51);
    const Tensor expected = forward(gpt, ids);
    const ingot::test::OnnxRun run = ingot::test::run_onnx(*python, dir / "model.onnx", ids, dir.path());
    INGOT_REQUIRE_CLOSE(run.logits, expected, kTol, 0.0);
    CHECK(run.info.find(R"("inputs": [["input_ids", ["N", "T"]]])") != std::string::npos);
    CHECK(run.info.find(R"("outputs": [["logits", ["N", "T", 20]]])") != std::string::npos);
    CHECK(run.info.find(R"("tokenizer": "byte")") != std::string::npos);
    CHECK(run.info.find(R"("block_size": "12")") != std::string::npos);
    CHECK(run.info.find(R"("vocab_size": "20")") != std::string::npos);
    CHECK(run.info.find("class_names") == std::string::npos);
    CHECK(run.info.find("normalize_mean") == std::string::npos);
    for (const auto& [name, w] : gpt.state_dict()) CHECK(run.info.find('"' + name + '"') != std::string::npos);
  }
}

}  // namespace

TEST_CASE("onnx export: GPT with a dynamic T matches onnxruntime at T = 5 and T = block_size", "[onnx]") {
  Generator gen(11);
  nn::Gpt gpt(small_gpt(false), &gen);
  randomize(gpt);
  check_gpt(gpt, {5, 12});
}

TEST_CASE("onnx export: GPT with rotary embeddings matches onnxruntime", "[onnx]") {
  Generator gen(12);
  nn::Gpt gpt(small_gpt(true), &gen);
  randomize(gpt);
  check_gpt(gpt, {1, 7, 12});
}

TEST_CASE("onnx export: a post-LayerNorm, non-causal TransformerBlock (erf GELU) matches onnxruntime", "[onnx]") {
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  Generator gen(13);
  nn::BlockConfig c;
  c.attention = {8, 2, true, 0.0, false, false, 10000.0};
  c.norm_first = false;
  c.activation = "gelu";
  nn::TransformerBlock block(c, &gen);
  randomize(block);
  block.eval();
  const Tensor x = random_tensor(Shape{2, 6, 8}, DType::F32, 14);
  const Tensor expected = forward(block, x);
  const ingot::test::OnnxRun r = ingot::test::run_exported(*python, block, Shape{6, 8}, x);
  INGOT_REQUIRE_CLOSE(r.logits, expected, kTol, 0.0);
}

TEST_CASE("onnx export: a GPT is refused without token ids, or with more positions than its context", "[onnx]") {
  Generator gen(15);
  nn::Gpt gpt(small_gpt(false), &gen);
  gpt.eval();
  io::onnx::ExportOptions features;
  features.input_shape = Shape{12};
  REQUIRE_THROWS_AS(io::onnx::export_onnx(gpt, features), InputError);
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(gpt, features), Catch::Contains("layer '<model>' (GPT) takes token ids") &&
                                                                Catch::Contains("InputKind::TokenIds") &&
                                                                Catch::Contains("float32 [1, 12]"));
  REQUIRE_THROWS_AS(io::onnx::export_onnx(gpt, token_options(13)), ShapeError);
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(gpt, token_options(13)), Catch::Contains("block_size"));
  io::onnx::ExportOptions two_dims = token_options(12);
  two_dims.input_shape = Shape{3, 12};
  REQUIRE_THROWS_WITH(io::onnx::export_onnx(gpt, two_dims), Catch::Contains("input shape must be [block_size]"));
}
