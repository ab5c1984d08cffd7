// The callback registry and the train.callbacks list.
#include "ingot/train/callback_registry.h"

#include <fmt/format.h>

namespace ingot::train {

CallbackRegistry& callback_registry() {
  static auto* registry = new CallbackRegistry("callback");
  return *registry;
}

std::vector<std::unique_ptr<TrainCallback>> make_callbacks(const YAML::Node& node, const std::string& file) {
  std::vector<std::unique_ptr<TrainCallback>> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence())
    throw ConfigError(fmt::format("{}: train.callbacks: expected a list of callbacks", config::where(file, node)));
  for (size_t i = 0; i < node.size(); ++i)
    out.push_back(callback_registry().make(node[i], file, fmt::format("train.callbacks[{}]", i)));
  return out;
}

}  // namespace ingot::train
