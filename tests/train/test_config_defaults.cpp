// config_with_defaults (what --print-config shows): the train and model defaults are there, and the
// result is a config that reads back to itself.
#include <catch2/catch.hpp>

#include <string>

#include "ingot/config/config.h"
#include "ingot/config/yaml_text.h"
#include "ingot/train/config_defaults.h"
#include "ingot/train/pipeline_schema.h"

using ingot::config::Config;

namespace {

std::string shown(const std::string& yaml) {
  const Config cfg = Config::parse(yaml, ingot::train::pipeline_schema(), "c.yaml");
  return ingot::config::emit_yaml(ingot::train::config_with_defaults(cfg));
}

}  // namespace

TEST_CASE("config defaults: train, optimizer, loss and the preset's options are filled in",
          "[train][config_defaults]") {
  const std::string text = shown(
      "name: t\n"
      "data: {dataset: synthetic}\n"
      "model: {preset: simple_cnn, input_shape: [1, 8, 8]}\n"
      "train: {epochs: 2, optimizer: {type: sgd, lr: 0.1}}\n");
  for (const char* line :
       {"  epochs: 2", "  log_every: 10", "  eval_every_epoch: true", "    type: cross_entropy",
        "    label_smoothing: 0", "    lr: 0.1", "    momentum: 0", "    nesterov: false", "  width: 32",
        "  hidden: 128", "  dropout: 0.25", "  in_channels: 1", "  batch_size: 64", "    keep_last: 3"})
    CHECK(text.find(std::string("\n") + line + "\n") != std::string::npos);
  const std::string model = text.substr(text.find("\nmodel:"), text.find("\ntrain:") - text.find("\nmodel:"));
  CHECK(model.find("classes") == std::string::npos);  // (the data's, in a run)
  CHECK(text.find("000000") == std::string::npos);    // no 17-digit numbers
  // A model without train: section trains with the defaults, AdamW's included.
  const std::string bare = shown("name: t\nmodel: {preset: mlp, sizes: [4, 2]}\n");
  CHECK(bare.find("    type: adamw\n    lr: 0.001\n") != std::string::npos);
  CHECK(bare.find("    betas: [0.9, 0.999]\n") != std::string::npos);
  CHECK(bare.find("  activation: relu\n") != std::string::npos);
  // A config without a pipeline (smoke) gets no sections it does not have.
  CHECK(shown("name: s\nsmoke: {matmul_size: 8}\n").find("train") == std::string::npos);
}

TEST_CASE("config defaults: what it prints is a valid config that prints the same", "[train][config_defaults]") {
  const std::string once = shown(
      "name: t\n"
      "data: {dataset: synthetic, validation: {fraction: 0.1}}\n"
      "model: {preset: mlp, sizes: [64, 10], dropout: 0.1}\n"
      "train: {steps: 5, amp: {dtype: fp16}, early_stopping: {patience: 2}, scheduler: {type: cosine},\n"
      "        checkpoint: {every_steps: 3}, clip_grad_norm: 1.5, checkpointing: {segments: 1}}\n");
  CHECK(once.find("  steps: 5\n") != std::string::npos);
  CHECK(once.find("      init_scale: 65536\n") != std::string::npos);
  CHECK(once.find("    mode: min\n") != std::string::npos);
  CHECK(shown(once) == once);
}
