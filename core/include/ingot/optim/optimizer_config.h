// Optimizers from YAML (`train.optimizer:`) and the usual parameter-group split: no weight decay
// on biases and normalisation weights.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingot/config/type_registry.h"
#include "ingot/optim/optimizer.h"
#include "ingot/optim/option_list.h"

namespace ingot::optim {

/// Parameters by name, in model order (nn::Module::named_parameters()).
using NamedParams = std::vector<std::pair<std::string, Tensor>>;

/// Splits parameters into a group with the optimizer's weight decay (tensors of rank >= 2:
/// weights of linear / conv / embedding layers) and one with weight_decay 0 (rank <= 1: biases,
/// norm weights and biases), dropping empty groups. Disabled (`split` false): one group.
std::vector<GroupSpec> decay_groups(const NamedParams& params, bool split = true);

/// Optimizers by `type:` (sgd, adam, adamw and any an extension adds), each with its own keys
/// (optimizer_type). Defaults are torch's.
using OptimizerRegistry = config::TypeRegistry<std::unique_ptr<Optimizer>, const NamedParams&>;
OptimizerRegistry& optimizer_registry();

/// Builds an optimizer over parameter groups with `defaults` (options of its OptionList).
using OptimizerMaker =
    std::function<std::unique_ptr<Optimizer>(const std::vector<GroupSpec>& groups, const GroupOptions& defaults)>;

/// The registry entry of an optimizer type whose config keys are its `options` (a list key such
/// as betas for options that share one) plus, when it has weight_decay, no_decay_on_bias_and_norm
/// (default true: decay_groups). `options` must outlive the registry (declare it as a
/// function-local static). Built-ins and extensions register optimizers through it:
///
///     registry.optimizers.add(optimizer_type("lion", LionOptions::table(), make_lion, "Lion"));
OptimizerRegistry::Entry optimizer_type(std::string type, const OptionList& options, OptimizerMaker make,
                                        std::string help);

/// Builds the optimizer of a `train.optimizer:` map over `params`. Throws ConfigError
/// "FILE:LINE: ..." naming the key (a key of another type, a bad betas list, nesterov without
/// momentum, ...).
std::unique_ptr<Optimizer> make_optimizer(const YAML::Node& node, const NamedParams& params, const std::string& file,
                                          const std::string& path = "train.optimizer");

/// The resolved config of an optimizer (type and every option of its defaults, in its
/// OptionList's order), for config.resolved.yaml.
YAML::Node optimizer_to_yaml(const Optimizer& optimizer, bool no_decay_on_bias_and_norm);

/// optimizer_to_yaml of the optimizer a `train.optimizer:` map describes, before there is a model
/// (its options do not depend on the parameters; one placeholder parameter stands in for them).
/// Throws what make_optimizer throws.
YAML::Node optimizer_defaults_yaml(const YAML::Node& node, const std::string& file);

}  // namespace ingot::optim
