// Trainer callbacks by `type:` (the `train.callbacks:` list), for the features that extension
// plugins attach to the training loop (gradual pruning, logging, ...).
#pragma once

#include <memory>
#include <vector>

#include "ingot/config/type_registry.h"
#include "ingot/train/callback.h"

namespace ingot::train {

using CallbackRegistry = config::TypeRegistry<std::unique_ptr<TrainCallback>>;

/// The process's callback registry (no built-in types: extensions add them).
CallbackRegistry& callback_registry();

/// The `train.callbacks:` list, each entry a type name or a map with `type:`; absent = none.
std::vector<std::unique_ptr<TrainCallback>> make_callbacks(const YAML::Node& node, const std::string& file);

}  // namespace ingot::train
