// Models from a pipeline config's `model:` section: a `layers:` list or a `preset:` (mlp,
// simple_cnn, resnet), checked against model_schema() and, when `input_shape` is given, for
// shape mismatches between layers, before any training starts.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "ingot/config/schema.h"
#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

/// The keys of `model:` (layers, preset, input_shape and the presets' options). The entries of
/// `layers:` are checked by build_model, each against the keys of its `type:`.
config::Schema model_schema();

/// The layer types a `layers:` entry may name.
std::vector<std::string> layer_types();

/// Builds the model of a `model:` section. Parameters are drawn from `gen`; Dropout layers draw
/// their masks from `dropout_gen` (not owned, must outlive the model; the default generator
/// when null). Throws ConfigError "FILE:LINE: model...: what" for unknown keys and types, bad
/// values, keys that the chosen preset does not use, and — when `input_shape` (C, H, W or
/// features, without the batch dim) is given — layers whose input does not fit the previous
/// layer's output.
ModulePtr build_model(const YAML::Node& model_section, const std::string& file, Generator& gen,
                      Generator* dropout_gen = nullptr);

/// `model.input_shape` without the batch dim, when given (validated like build_model does).
std::optional<Shape> model_input_shape(const YAML::Node& model_section, const std::string& file);

/// `model_section` with its preset's defaults filled in (mlp: activation, dropout; simple_cnn:
/// in_channels, width, hidden, dropout; resnet: in_channels, depth, width); a `layers:` list as
/// written. `classes` stays absent when absent: a pipeline takes the data's.
YAML::Node model_config_yaml(const YAML::Node& model_section, const std::string& file);

/// Points every Dropout layer of `model` at `gen` (e.g. a generator restored from a checkpoint).
void set_dropout_generator(Module& model, Generator* gen);

}  // namespace ingot::nn
