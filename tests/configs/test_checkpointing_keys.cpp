// The gradient checkpointing keys: `checkpoint: true` on an entry of model.layers (a layer or a
// block becomes a checkpointed segment) and train.checkpointing.segments (checkpoint_sequential
// on the built model), with their errors naming the file and line.
#include <catch2/catch.hpp>

#include "ingot/config/config.h"
#include "ingot/nn/nn.h"
#include "ingot/ops/creation.h"
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

  // The presets and layers lists are Sequentials: the key applies to each, cut by measured bytes.
  const std::vector<std::pair<const char*, Shape>> models{
      {"model: {preset: mlp, sizes: [16, 8, 8, 4]}", {16}},
      {"model: {preset: simple_cnn, input_shape: [1, 8, 8]}", {1, 8, 8}},
      {"model: {preset: resnet, depth: 8, width: 4, input_shape: [3, 8, 8]}", {3, 8, 8}},
      {"model: {layers: [flatten, {type: linear, in: 16, out: 4}, relu]}", {16}}};
  for (const auto& [yaml, sample] : models) {
    INFO(yaml);
    const auto m = build(yaml);
    const auto input = [&sample = sample](int64_t batch) {
      Shape shape{batch};
      for (int64_t d : sample) shape.push_back(d);
      return ones(shape);
    };
    const nn::CheckpointPlan plan = nn::apply_checkpointing(*m, {.segments = 3}, input, "p.yaml:3");
    auto& seq = dynamic_cast<nn::Sequential&>(*m);
    CHECK(seq.checkpoint_plan() == plan.ends);
    CHECK(!plan.ends.empty());
    CHECK(plan.ends.size() <= 3);
    CHECK(plan.ends.back() == seq.units().size());
    CHECK(plan.peak <= plan.plain);
  }
  const auto small = build("model: {layers: [flatten, {type: linear, in: 16, out: 4}]}");
  const auto ones16 = [](int64_t batch) { return ones({batch, 16}); };
  CHECK_THAT(config_error([&] { nn::apply_checkpointing(*small, {.segments = 3}, ones16, "p.yaml:3"); }),
             Catch::StartsWith("p.yaml:3") && Catch::Contains("has 2 layers and blocks"));
  CHECK_THAT(config_error([&] { nn::apply_checkpointing(*small, {.blocks = true}, ones16, "p.yaml:3"); }),
             Catch::StartsWith("p.yaml:3") && Catch::Contains("no blocks"));
  CHECK_THAT(config_error([] {
               config::Config::parse("name: t\ntrain:\n  checkpointing: {segments: 2, blocks: true}\n",
                                     train::pipeline_schema(), "p.yaml");
               const config::Config c =
                   config::Config::parse("name: t\ntrain:\n  checkpointing: {segments: 2, blocks: true}\n",
                                         train::pipeline_schema(), "p.yaml");
               (void)train::parse_train_config(c.node("train"), c.file());
             }),
             Catch::Contains("not both"));
  nn::BasicBlock block(4, 4);
  CHECK_THAT(config_error([&] { nn::apply_checkpointing(block, {.segments = 2}, ones16, "p.yaml:3"); }),
             Catch::StartsWith("p.yaml:3") && Catch::Contains("needs a Sequential model"));
}
