// check_model_fits_data: a model whose outputs are not one logit per class is refused before any
// step, naming the key to change at its line, for presets and layers lists alike.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <string>

#include "ingot/base/error.h"
#include "ingot/config/overrides.h"
#include "ingot/nn/model_builder.h"
#include "ingot/train/model_fit.h"
#include "ingot/train/pipeline_schema.h"

using ingot::Shape;
using ingot::train::check_model_fits_data;

namespace {

/// The message check_model_fits_data gives for the `model:` section in `yaml` on samples
/// `sample` of `classes` classes ("" when it accepts the model).
std::string refusal(const std::string& yaml, const Shape& sample, int64_t classes) {
  const YAML::Node m = YAML::Load(yaml);
  ingot::Generator gen(0);
  const ingot::nn::ModulePtr model = ingot::nn::build_model(m, "m.yaml", gen);
  try {
    check_model_fits_data(*model, m, "m.yaml", ingot::nn::model_input_shape(m, "m.yaml"), sample, classes);
  } catch (const ingot::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("model fit: an mlp with more outputs than classes names model.sizes[-1] at its line", "[train][model_fit]") {
  const std::string mlp = "preset: mlp\nsizes:\n  - 4\n  - 32\n  - 5\n";
  CHECK(refusal(mlp, Shape{4, 1, 1}, 3) ==
        "m.yaml:5: the model gives 5 outputs per sample but the data has 3 classes: set model.sizes[-1] (the last "
        "size) to 3");
  CHECK(refusal(mlp, Shape{4, 1, 1}, 7).find("gives 5 outputs per sample but the data has 7 classes") !=
        std::string::npos);
  CHECK(refusal(mlp, Shape{4, 1, 1}, 5).empty());
}

TEST_CASE("model fit: conv presets name model.classes", "[train][model_fit]") {
  for (const char* preset : {"simple_cnn", "resnet"}) {
    const std::string yaml = fmt::format("preset: {}\ninput_shape: [1, 8, 8]\nclasses: 4\n", preset);
    CHECK(refusal(yaml, Shape{1, 8, 8}, 3) ==
          "m.yaml:3: the model gives 4 outputs per sample but the data has 3 classes: set model.classes to 3");
    CHECK(refusal(yaml, Shape{1, 8, 8}, 4).empty());
  }
}

TEST_CASE("model fit: a layers list names the last layer that sets a size", "[train][model_fit]") {
  const std::string yaml =
      "layers:\n"
      "  - {type: flatten}\n"
      "  - {type: linear, in: 16, out: 8}\n"
      "  - {type: relu}\n"
      "  - {type: linear, in: 8, out: 5}\n"
      "  - {type: dropout, p: 0.1}\n";
  CHECK(refusal(yaml, Shape{1, 4, 4}, 3) ==
        "m.yaml:5: the model gives 5 outputs per sample but the data has 3 classes: set model.layers[3].out to 3");
  // Output that is not [1, classes] at all: the list must end in a flatten and a linear layer.
  CHECK(refusal("layers:\n  - {type: conv2d, in: 1, out: 4, kernel: 3}\n", Shape{1, 8, 8}, 3) ==
        "m.yaml:1: the model gives [1, 4, 6, 6] for one sample of [1, 8, 8], not [1, 3] (one logit per class): end it "
        "with a flatten and a linear layer of out: 3");
}

TEST_CASE("model fit: samples the model does not take, and an input_shape that is not theirs", "[train][model_fit]") {
  CHECK(refusal("preset: mlp\nsizes: [25, 2]\n", Shape{1, 4, 4}, 2)
            .find("m.yaml:1: the model does not fit the data's samples [1, 4, 4]: ") == 0);
  CHECK(refusal("preset: mlp\ninput_shape: [1, 5, 5]\nsizes: [25, 2]\n", Shape{1, 4, 4}, 2) ==
        "m.yaml:2: model.input_shape is [1, 5, 5] but the data's samples are [1, 4, 4]");
}

TEST_CASE("model fit: a size set on the command line is named as the assignment", "[train][model_fit]") {
  YAML::Node root = YAML::Load("name: t\nmodel: {preset: mlp, sizes: [4, 3]}\n");
  ingot::config::apply_overrides(root, {"model.sizes=[4,32,5]"}, ingot::train::pipeline_schema());
  const YAML::Node m = root["model"];
  ingot::Generator gen(0);
  const ingot::nn::ModulePtr model = ingot::nn::build_model(m, "t.yaml", gen);
  CHECK_THROWS_WITH(check_model_fits_data(*model, m, "t.yaml", std::nullopt, Shape{4, 1, 1}, 3),
                    "model.sizes=[4,32,5] (command line): the model gives 5 outputs per sample but the data has 3 "
                    "classes: set model.sizes[-1] (the last size) to 3");
}
