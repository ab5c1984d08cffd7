// Losses by `type:` (train.loss): cross_entropy, nll, mse, l1, bce_with_logits, kl_div, and any
// an extension plugin adds. A Loss maps (model output, batch targets) to a scalar.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>

#include "ingot/config/type_registry.h"
#include "ingot/nn/loss.h"

namespace ingot::nn {

/// A configured loss. `fn` takes the reduction so evaluation can sum where training averages.
struct Loss {
  std::string type;
  Reduction reduction = Reduction::Mean;
  std::function<Tensor(const Tensor& output, const Tensor& target, Reduction reduction)> fn;
  YAML::Node resolved;  ///< every option with its value, for config.resolved.yaml

  Tensor operator()(const Tensor& output, const Tensor& target) const { return fn(output, target, reduction); }
};

using LossRegistry = config::TypeRegistry<Loss>;

/// The process's loss registry, built-ins included.
LossRegistry& loss_registry();

/// Builds train.loss (a map with `type:`, a bare type name, or absent: cross_entropy).
Loss make_loss(const YAML::Node& node, const std::string& file);

/// Class indices [N] as one-hot rows [N, classes] of `dtype` (for mse, l1, bce and kl_div
/// against a classification dataset's labels).
Tensor one_hot(const Tensor& target, int64_t classes, DType dtype);

}  // namespace ingot::nn
