// One `layers:` entry of a model config -> a layer (private to core/src/nn).
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn::detail {

/// Builds the entry at `path` ("model.layers[2]"): a type name ("relu") or a map with `type:`
/// and that type's keys, validated (ConfigError with FILE:LINE). `input` is the shape reaching
/// the layer when known (batch dim included); batchnorm2d / layernorm take their size from it
/// when not given.
ModulePtr build_layer(const YAML::Node& entry, const std::string& file, const std::string& path,
                      const std::optional<Shape>& input, Generator& gen, Generator* dropout_gen);

}  // namespace ingot::nn::detail
