// Models from YAML: layers lists and presets build the expected modules; every mistake is one
// ConfigError naming the file, line and key (and the shapes, for mismatched layers).
#include <catch2/catch.hpp>

#include "ingot/nn/nn.h"
#include "ingot/ops/ops.h"
#include "test_support.h"

using namespace ingot;
using namespace ingot::nn;

namespace {

ModulePtr build(const std::string& yaml, uint64_t seed = 0) {
  static Generator gen;
  gen.manual_seed(seed);
  return build_model(YAML::Load(yaml)["model"], "m.yaml", gen);
}

std::string error_of(const std::string& yaml) {
  try {
    build(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST_CASE("nn builder: a layers list", "[nn][config]") {
  const auto m = build(R"(
model:
  input_shape: [1, 28, 28]
  layers:
    - {type: conv2d, in: 1, out: 8, kernel: 3, padding: 1, bias: false}
    - batchnorm2d
    - relu
    - {type: maxpool2d, kernel: 2}
    - flatten
    - {type: dropout, p: 0.1}
    - {type: linear, in: 1568, out: 10}
)");
  CHECK(m->state_dict().size() == 8);
  CHECK(m->state_dict()[1].first == "1.weight");
  CHECK(m->state_dict().back().first == "6.bias");
  CHECK(m->forward(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});
  const auto m2 = build(R"(
model:
  layers: [{type: embedding, num: 10, dim: 4}, {type: layernorm, features: 4}, gelu, tanh, sigmoid,
           {type: linear, in: 4, out: 2, bias: false}]
)");
  CHECK(m2->forward(Tensor::from_vector<int64_t>({1, 2, 3}, {3})).shape() == Shape{3, 2});
}

TEST_CASE("nn builder: presets", "[nn][config]") {
  const auto mlp = build("model: {preset: mlp, sizes: [784, 512, 256, 10], dropout: 0.2, activation: gelu}");
  CHECK(mlp->num_parameters() == 535818);
  CHECK(mlp->forward(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});
  const auto cnn = build("model: {preset: simple_cnn, input_shape: [1, 28, 28]}");
  CHECK(cnn->num_parameters() == 421738);
  const auto cnn3 = build("model: {preset: simple_cnn, input_shape: [3, 32, 32], classes: 100, width: 8}");
  CHECK(cnn3->forward(zeros({1, 3, 32, 32})).shape() == Shape{1, 100});
  const auto r = build("model: {preset: resnet, depth: 20}");
  CHECK(r->num_parameters() == 272474);
  const auto r8 = build("model: {preset: resnet, depth: 8, width: 8, in_channels: 1, classes: 10}");
  CHECK(r8->forward(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});
  // same seed, same weights
  INGOT_REQUIRE_CLOSE(build("model: {preset: resnet, depth: 8}", 5)->parameters()[0],
                      build("model: {preset: resnet, depth: 8}", 5)->parameters()[0], 0.0, 0.0);
}

TEST_CASE("nn builder: errors name the line, key and shapes", "[nn][config]") {
  CHECK_THAT(
      error_of(R"(
model:
  input_shape: [1, 28, 28]
  layers:
    - {type: conv2d, in: 1, out: 64, kernel: 3, padding: 1}
    - {type: maxpool2d, kernel: 4}
    - flatten
    - {type: linear, in: 100, out: 10}
)"),
      Catch::StartsWith("m.yaml:8:") && Catch::Contains("model.layers[3] (Linear)") && Catch::Contains("[1, 3136]"));
  CHECK_THAT(
      error_of("model:\n  layers:\n    - {type: linear, in: 3, outt: 2}\n"),
      Catch::StartsWith("m.yaml:3:") && Catch::Contains("unknown key 'outt'") && Catch::Contains("did you mean 'out'"));
  CHECK_THAT(error_of("model:\n  layers:\n    - {type: lineer, in: 3, out: 2}\n"),
             Catch::Contains("unknown layer type 'lineer'") && Catch::Contains("did you mean 'linear'"));
  CHECK_THAT(error_of("model:\n  layers:\n    - linear\n"), Catch::Contains("needs keys in, out"));
  CHECK_THAT(error_of("model:\n  layers:\n    - {type: conv2d, in: 3, out: 4, kernel: 0}\n"),
             Catch::Contains("'model.layers[0].kernel' must be >= 1"));
  CHECK_THAT(error_of("model:\n  layers:\n    - {type: conv2d, in: 3, out: 4, kernel: 3, groups: 2}\n"),
             Catch::StartsWith("m.yaml:3:") && Catch::Contains("groups=2"));
  CHECK_THAT(error_of("model:\n  layers:\n    - batchnorm2d\n"), Catch::Contains("missing 'features'"));
  CHECK_THAT(error_of("model: {preset: mlp}"), Catch::Contains("needs 'model.sizes'"));
  CHECK_THAT(error_of("model: {preset: mlp, sizes: [784, x]}"), Catch::Contains("'model.sizes[1]' must be an integer"));
  CHECK_THAT(error_of("model: {preset: resnet, depth: 21}"), Catch::Contains("6n + 2"));
  CHECK_THAT(error_of("model: {preset: resnet, sizes: [1, 2]}"), Catch::Contains("'model.sizes' does not apply"));
  CHECK_THAT(error_of("model: {preset: simple_cn}"), Catch::Contains("did you mean 'simple_cnn'"));
  CHECK_THAT(error_of("model: {input_shape: [1, 28, 28]}"), Catch::Contains("either 'layers:'"));
  CHECK_THAT(error_of("model: {preset: mlp, sizes: [10, 2], layers: [relu]}"), Catch::Contains("not both"));
  CHECK_THAT(error_of("model: {preset: mlp, sizes: [100, 10], input_shape: [1, 28, 28]}"),
             Catch::Contains("input_shape [1, 28, 28] does not fit preset mlp"));
  CHECK_THAT(error_of("model: {preset: simple_cnn, in_channels: 3, input_shape: [1, 28, 28]}"),
             Catch::Contains("disagrees"));
  CHECK_THAT(error_of("model: {preset: mlp, sizes: [10, 2], dropot: 0.1}"), Catch::Contains("did you mean 'dropout'"));
}

TEST_CASE("nn builder: input shape and dropout generator", "[nn][config]") {
  const YAML::Node m = YAML::Load("model: {preset: simple_cnn, input_shape: [1, 28, 28]}")["model"];
  CHECK(model_input_shape(m, "m.yaml") == Shape{1, 28, 28});
  CHECK_FALSE(model_input_shape(YAML::Load("{preset: mlp}"), "m.yaml").has_value());
  Generator init(1), drop(2);
  auto net = build_model(m, "m.yaml", init, &drop);
  net->forward(zeros({2, 1, 28, 28}));
  CHECK(drop.offset() == 2 * 128 / 4);
  Generator other(3);
  set_dropout_generator(*net, &other);
  net->forward(zeros({2, 1, 28, 28}));
  CHECK(other.offset() == 64);
  CHECK(drop.offset() == 64);
}
