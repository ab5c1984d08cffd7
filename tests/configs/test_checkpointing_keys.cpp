// The gradient checkpointing keys: `checkpoint: true` on an entry of model.layers (a layer or a
// block becomes a checkpointed segment) and train.checkpointing.segments (checkpoint_sequential
// on the built model), with their errors naming the file and line.
#include <catch2/catch.hpp>

#include "ingot/config/config.h"
#include "ingot/nn/nn.h"
#include "ingot/train/pipeline_schema.h"
#include "ingot/train/train_config.h"

using namespace ingot;

namespace {

nn::ModulePtr build(const std::string& yaml) {
  static Generator gen;
  gen.manual_seed(0);
  return nn::build_model(YAML::Load(yaml)["model"], "m.yaml", gen);
}

template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST_CASE("checkpointing keys: checkpoint: true on a layer or block entry", "[config][checkpoint]") {
  const auto m = build(R"(
model:
  input_shape: [3, 16, 16]
  layers:
    - {type: conv2d, in: 3, out: 8, kernel: 3, padding: 1}
    - {type: basic_block, in: 8, out: 8, checkpoint: true}
    - {type: basic_block, in: 8, out: 16, stride: 2, checkpoint: false}
    - {type: linear, in: 8, out: 8, checkpoint: true}
)");
  auto& seq = dynamic_cast<nn::Sequential&>(*m);
  CHECK_FALSE(seq[0]->is_checkpointed());
  CHECK(seq[1]->is_checkpointed());
  CHECK_FALSE(seq[2]->is_checkpointed());
  CHECK(seq[3]->is_checkpointed());
  CHECK(m->state_dict()[0].first == "0.weight");  // names as without the key
  CHECK(m->state_dict()[2].first == "1.conv1.weight");

  CHECK_THAT(config_error([] { build("model:\n  layers:\n    - {type: relu, chekpoint: true}\n"); }),
             Catch::StartsWith("m.yaml:3") && Catch::Contains("did you mean 'checkpoint'"));
  CHECK_THAT(config_error([] { build("model:\n  layers:\n    - {type: relu, checkpoint: often}\n"); }),
             Catch::StartsWith("m.yaml:3") && Catch::Contains("checkpoint"));
}

TEST_CASE("checkpointing keys: train.checkpointing.segments on every kind of model", "[config][checkpoint]") {
  const config::Config cfg =
      config::Config::parse("name: t\ntrain:\n  checkpointing: {segments: 3}\n", train::pipeline_schema(), "p.yaml");
  const train::TrainConfig tc = train::parse_train_config(cfg.node("train"), cfg.file());
  REQUIRE(tc.checkpointing_segments == 3);
  CHECK_THAT(config_error([] {
               config::Config::parse("name: t\ntrain:\n  checkpointing: {segments: 0}\n", train::pipeline_schema(),
                                     "p.yaml");
             }),
             Catch::StartsWith("p.yaml:3") && Catch::Contains("segments"));

  // The presets and layers lists are Sequentials: the key applies to each.
  for (const char* yaml :
       {"model: {preset: mlp, sizes: [16, 8, 8, 4]}", "model: {preset: simple_cnn, input_shape: [1, 8, 8]}",
        "model: {preset: resnet, depth: 8, width: 4, input_shape: [3, 8, 8]}",
        "model: {layers: [flatten, {type: linear, in: 16, out: 4}, relu]}"}) {
    INFO(yaml);
    const auto m = build(yaml);
    nn::apply_checkpointing(*m, 3, cfg.where("train.checkpointing.segments"));
    CHECK(dynamic_cast<nn::Sequential&>(*m).checkpoint_segments() == 3);
  }
  const auto small = build("model: {layers: [flatten, {type: linear, in: 16, out: 4}]}");
  CHECK_THAT(config_error([&] { nn::apply_checkpointing(*small, 3, cfg.where("train.checkpointing.segments")); }),
             Catch::StartsWith("p.yaml:3") && Catch::Contains("has 2 top-level layers"));
  nn::BasicBlock block(4, 4);
  CHECK_THAT(config_error([&] { nn::apply_checkpointing(block, 2, "p.yaml:3"); }),
             Catch::StartsWith("p.yaml:3") && Catch::Contains("needs a Sequential model"));
}
