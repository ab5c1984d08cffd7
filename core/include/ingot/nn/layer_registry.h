// Layers by `type:` (model.layers entries): linear, conv2d, batchnorm2d, ... and any an extension
// plugin adds. A factory gets the entry's keys and where the layer sits in the model.
#pragma once

#include <optional>
#include <string>

#include "ingot/config/type_registry.h"
#include "ingot/nn/module.h"
#include "ingot/ops/random.h"

namespace ingot::nn {

/// Where a layer is built: its config path ("model.layers[2]"), the shape reaching it when known
/// (batch dim included; norms take their size from it), the generators for weights and dropout.
struct LayerContext {
  std::string path;
  std::optional<Shape> input;
  Generator& gen;
  Generator* dropout_gen = nullptr;
};

using LayerRegistry = config::TypeRegistry<ModulePtr, const LayerContext&>;

/// The process's layer registry, built-ins included.
LayerRegistry& layer_registry();

}  // namespace ingot::nn
