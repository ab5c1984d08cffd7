// ONNX export against onnxruntime: the presets (MLP, CNN, ResNet with BatchNorm in eval) and a
// model with every built-in layer type run through onnxruntime within 1e-4 (abs + rel) of their
// own forward, the file passes onnx.checker, and it carries the metadata. Skipped without the
// test venv (scripts/test installs onnxruntime there).
#include <catch2/catch.hpp>

#include <random>

#include "ingot/nn/nn.h"
#include "onnx_test_util.h"
#include "test_support.h"

using namespace ingot;
using ingot::test::forward;
using ingot::test::random_tensor;
using ingot::test::run_exported;

namespace {

// f32 tolerance: exported graphs compute the same ops in another order (onnxruntime's GEMM and
// convolution, BatchNorm not folded); 1e-4 abs + rel is far above that rounding, far below a bug.
constexpr double kTol = 1e-4;

// Non-trivial BatchNorm statistics and affine parameters, so that eval-mode BN is not an identity.
void randomize_batch_norms(nn::Module& model) {
  uint64_t seed = 100;
  for (const auto& [name, t] : model.named_buffers()) {
    if (name.ends_with("running_mean")) t.copy_(random_tensor(t.shape(), DType::F32, ++seed, -0.5, 0.5));
    if (name.ends_with("running_var")) t.copy_(random_tensor(t.shape(), DType::F32, ++seed, 0.5, 2.0));
  }
  for (const auto& [name, t] : model.named_parameters()) {
    if ((name.find("bn") != std::string::npos || name.starts_with("1.")) && t.dim() == 1)
      t.detach().copy_(random_tensor(t.shape(), DType::F32, ++seed, 0.5, 1.5));
  }
}

void check_against_onnxruntime(nn::Module& model, const Shape& sample, int64_t batch = 3) {
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  model.eval();
  Shape full{batch};
  for (int64_t d : sample) full.push_back(d);
  const Tensor x = random_tensor(full, DType::F32, 7);
  const Tensor expected = forward(model, x);
  const ingot::test::OnnxRun r = run_exported(*python, model, sample, x);
  INGOT_REQUIRE_CLOSE(r.logits, expected, kTol, kTol);
}

}  // namespace

TEST_CASE("onnx export: MLP preset (ReLU, Dropout) matches onnxruntime", "[onnx]") {
  Generator gen(1);
  auto mlp = nn::make_mlp({{64, 32, 16, 4}, "relu", 0.2}, &gen);
  check_against_onnxruntime(*mlp, Shape{1, 8, 8});
}

TEST_CASE("onnx export: MLP presets with GELU, Sigmoid, Tanh match onnxruntime", "[onnx]") {
  for (const char* act : {"gelu", "sigmoid", "tanh"}) {
    INFO(act);
    Generator gen(2);
    auto mlp = nn::make_mlp({{48, 24, 5}, act, 0.0}, &gen);
    check_against_onnxruntime(*mlp, Shape{3, 4, 4});
  }
}

TEST_CASE("onnx export: CNN preset (Conv, BatchNorm in eval, MaxPool) matches onnxruntime", "[onnx]") {
  Generator gen(3);
  nn::SimpleCnnOptions o;
  o.height = o.width = 12;
  o.channels = 4;
  o.hidden = 16;
  o.classes = 5;
  auto cnn = nn::make_simple_cnn(o, &gen);
  randomize_batch_norms(*cnn);
  check_against_onnxruntime(*cnn, Shape{1, 12, 12});
}

TEST_CASE("onnx export: ResNet preset (BasicBlocks, shortcuts, BatchNorm in eval) matches onnxruntime", "[onnx]") {
  Generator gen(4);
  auto resnet = nn::make_resnet({8, 4, 3, 10}, &gen);
  randomize_batch_norms(*resnet);
  check_against_onnxruntime(*resnet, Shape{3, 8, 8});
}

TEST_CASE("onnx export: torchvision-layout ResNet-18 and ResNet-50 (Bottlenecks, downsample) match onnxruntime",
          "[onnx]") {
  for (const int64_t depth : {18, 50}) {
    INFO("depth " << depth);
    Generator gen(6);
    nn::ResNetOptions o;
    o.depth = depth;
    o.width = 4;
    o.style = "imagenet";
    auto resnet = nn::make_resnet(o, &gen);
    randomize_batch_norms(*resnet);
    check_against_onnxruntime(*resnet, Shape{3, 32, 32});
  }
}

TEST_CASE("onnx export: MobileNetV2 (depthwise convs, ReLU6, inverted residuals) matches onnxruntime", "[onnx]") {
  Generator gen(7);
  nn::MobileNetV2Options o;
  o.width_mult = 0.25;
  o.classes = 10;
  auto net = nn::make_mobilenet_v2(o, &gen);
  randomize_batch_norms(*net);
  check_against_onnxruntime(*net, Shape{3, 32, 32});
}

TEST_CASE("onnx export: every built-in layer type with non-default attributes matches onnxruntime", "[onnx]") {
  Generator gen(5);
  nn::Conv2dOptions dilated;
  dilated.stride = {2, 2};
  dilated.padding = {2, 2};
  dilated.dilation = {2, 2};
  dilated.groups = 2;
  nn::Conv2dOptions plain;
  plain.padding = {1, 1};
  nn::BatchNormOptions no_affine;
  no_affine.affine = false;
  Pool2dParams max_ceil{{3, 3}, {2, 2}, {1, 1}, true};
  Pool2dParams avg_excl{{3, 3}, {1, 1}, {1, 1}, false, false};
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Conv2d>(3, 4, 3, plain, &gen),  // [4, 12, 12]
      std::make_shared<nn::BatchNorm2d>(4, no_affine),
      std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Conv2d>(4, 6, 3, dilated, &gen),  // [6, 6, 6]
      std::make_shared<nn::GELU>(),
      std::make_shared<nn::MaxPool2d>(max_ceil),        // [6, 4, 4] (ceil_mode)
      std::make_shared<nn::BasicBlock>(6, 8, 1, &gen),  // [8, 4, 4], projection shortcut
      std::make_shared<nn::BasicBlock>(8, 8, 1, &gen),  // identity shortcut
      std::make_shared<nn::AvgPool2d>(avg_excl),        // [8, 4, 4]
      std::make_shared<nn::Sigmoid>(),
      std::make_shared<nn::AdaptiveAvgPool2d>(std::array<int64_t, 2>{2, 2}),  // [8, 2, 2]
      std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Flatten>(),  // [32]
      std::make_shared<nn::LayerNorm>(Shape{32}, 1e-3),
      std::make_shared<nn::Dropout>(0.5),
      std::make_shared<nn::Linear>(32, 5, true, &gen),
  });
  randomize_batch_norms(*model);
  check_against_onnxruntime(*model, Shape{3, 12, 12});
}

TEST_CASE("onnx export: Linear and LayerNorm over the last dim of a 3-D value, Flatten of middle dims", "[onnx]") {
  Generator gen(6);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Flatten>(2, 3),              // [2, 3, 4] -> [2, 12]
      std::make_shared<nn::Linear>(12, 6, true, &gen),  // MatMul + Add
      std::make_shared<nn::LayerNorm>(Shape{6}, 1e-5, false),
      std::make_shared<nn::Linear>(6, 6, false, &gen),                                    // MatMul, no bias
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(12, 3, false, &gen),  // Gemm without bias
  });
  check_against_onnxruntime(*model, Shape{2, 3, 4});
}

TEST_CASE("onnx export: Embedding (indices fed as floats, cast to int64) matches onnxruntime", "[onnx]") {
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  Generator gen(7);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
      std::make_shared<nn::Embedding>(10, 4, &gen), std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(20, 3, true, &gen)});
  model->eval();
  const Tensor idx = random_tensor(Shape{4, 5}, DType::I64, 9, 0, 9.49);
  const Tensor expected = forward(*model, idx);
  const ingot::test::OnnxRun r = run_exported(*python, *model, Shape{5}, idx);
  INGOT_REQUIRE_CLOSE(r.logits, expected, kTol, kTol);
}

TEST_CASE("onnx export: the file holds opset 17, IR 8, a symbolic batch, state_dict names and the metadata", "[onnx]") {
  const auto python = ingot::test::onnx_python_or_skip();
  if (!python) return;
  Generator gen(8);
  auto cnn = nn::make_simple_cnn({1, 8, 8, 2, 8, 3, 0.0}, &gen);
  cnn->eval();
  io::onnx::ExportOptions o;
  o.class_names = {"cat", "dog", "emu"};
  o.normalize_mean = {0.286f};
  o.normalize_std = {0.353f};
  o.run_name = "tiny";
  const Tensor x = random_tensor(Shape{2, 1, 8, 8}, DType::F32, 3);
  const ingot::test::OnnxRun r = run_exported(*python, *cnn, Shape{1, 8, 8}, x, o);
  const std::string& info = r.info;
  CHECK(info.find(R"("ir_version": 8)") != std::string::npos);
  CHECK(info.find(R"("opsets": {"": 17})") != std::string::npos);
  CHECK(info.find(R"("producer": "ingot")") != std::string::npos);
  CHECK(info.find(R"("class_names": "[\"cat\",\"dog\",\"emu\"]")") != std::string::npos);
  CHECK(info.find(R"("normalize_mean": "[0.286]")") != std::string::npos);
  CHECK(info.find(R"("normalize_std": "[0.353]")") != std::string::npos);
  CHECK(info.find(R"("run": "tiny")") != std::string::npos);
  CHECK(info.find(R"("inputs": [["input", ["N", 1, 8, 8]]])") != std::string::npos);
  CHECK(info.find(R"("outputs": [["logits", ["N", 3]]])") != std::string::npos);
  for (const auto& [name, t] : cnn->state_dict())
    if (name.find("num_batches_tracked") == std::string::npos) CHECK(info.find('"' + name + '"') != std::string::npos);
}

TEST_CASE("onnx export: pooling with ceil_mode and a last window reaching past the padding", "[onnx]") {
  for (bool include_pad : {true, false}) {
    INFO("count_include_pad " << include_pad);
    auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::ModulePtr>{
        // 6x6 -> 4x4: the last window holds a row of input, one of padding and one beyond it
        std::make_shared<nn::AvgPool2d>(Pool2dParams{{3, 3}, {2, 2}, {1, 1}, true, include_pad}),
        // 4x4 -> 2x2: the last window reaches one row past the input
        std::make_shared<nn::MaxPool2d>(Pool2dParams{{3, 3}, {2, 2}, {0, 0}, true}), std::make_shared<nn::Flatten>()});
    check_against_onnxruntime(*model, Shape{2, 6, 6});
  }
}
