// Optimizers from YAML: schema, per-type key checks, defaults equal to torch.optim's, and the
// decay / no-decay parameter split.
#include "ingot/optim/optimizer_config.h"

#include <algorithm>

#include "ingot/base/error.h"
#include "ingot/ops/creation.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/sgd.h"

#include <fmt/ranges.h>

namespace ingot::optim {

std::vector<GroupSpec> decay_groups(const NamedParams& params, bool split) {
  GroupSpec decay, no_decay;
  no_decay.weight_decay = 0.0;
  for (const auto& [name, p] : params) {
    INGOT_CHECK(p.defined(), "decay_groups: parameter '{}' is undefined", name);
    (split && p.dim() <= 1 ? no_decay : decay).params.push_back(p);
  }
  std::vector<GroupSpec> groups;
  if (!decay.params.empty()) groups.push_back(std::move(decay));
  if (!no_decay.params.empty()) groups.push_back(std::move(no_decay));
  return groups;
}

namespace {

/// The keys every optimizer type takes.
config::Schema common_keys() {
  config::Schema s;
  s.number("lr", 0.0);
  s.number("weight_decay", 0.0);
  s.boolean("no_decay_on_bias_and_norm");
  return s;
}

double num(const YAML::Node& node, const char* key, double fallback) {
  return node[key] ? node[key].as<double>() : fallback;
}
bool flag(const YAML::Node& node, const char* key, bool fallback) {
  return node[key] ? node[key].as<bool>() : fallback;
}

/// The parameter groups of `node`: decay / no-decay unless no_decay_on_bias_and_norm is false.
std::vector<GroupSpec> groups_of(const YAML::Node& node, const NamedParams& params) {
  return decay_groups(params, flag(node, "no_decay_on_bias_and_norm", true));
}

std::unique_ptr<Optimizer> make_sgd(const YAML::Node& node, const std::string&, const NamedParams& params) {
  SgdOptions o;
  o.lr = num(node, "lr", o.lr);
  o.momentum = num(node, "momentum", o.momentum);
  o.dampening = num(node, "dampening", o.dampening);
  o.weight_decay = num(node, "weight_decay", o.weight_decay);
  o.nesterov = flag(node, "nesterov", o.nesterov);
  return std::make_unique<SGD>(groups_of(node, params), o);
}

/// Adam's and AdamW's options (they differ in the default weight decay and how it applies).
AdamWOptions adam_options(const YAML::Node& node, const std::string& file, double weight_decay) {
  AdamWOptions o;
  o.weight_decay = weight_decay;
  o.lr = num(node, "lr", o.lr);
  o.eps = num(node, "eps", o.eps);
  o.weight_decay = num(node, "weight_decay", o.weight_decay);
  o.amsgrad = flag(node, "amsgrad", o.amsgrad);
  if (const YAML::Node betas = node["betas"]) {
    bool ok = betas.IsSequence() && betas.size() == 2;
    for (size_t i = 0; ok && i < 2; ++i) {
      double b = -1.0;
      ok = YAML::convert<double>::decode(betas[i], b) && b >= 0.0 && b < 1.0;
      (i == 0 ? o.beta1 : o.beta2) = b;
    }
    INGOT_CHECK_AS(ok, ConfigError, "{}: 'betas' must be a list of two numbers in [0, 1), like [0.9, 0.999]",
                   config::where(file, betas));
  }
  return o;
}

config::Schema adam_keys() {
  config::Schema s = common_keys();
  s.add(config::Field{"betas", config::FieldType::List, false, {}, {}, {}, nullptr, "[beta1, beta2], each in [0, 1)"});
  s.number("eps", 0.0);
  s.boolean("amsgrad");
  return s;
}

void add_builtins(OptimizerRegistry& r) {
  config::Schema sgd = common_keys();
  sgd.number("momentum", 0.0).number("dampening", 0.0, 1.0).boolean("nesterov");
  r.add({"sgd", std::move(sgd), make_sgd, "torch.optim.SGD (momentum, dampening, nesterov)"});
  r.add({"adam", adam_keys(),
         [](const YAML::Node& node, const std::string& file, const NamedParams& params) -> std::unique_ptr<Optimizer> {
           const AdamWOptions o = adam_options(node, file, AdamOptions{}.weight_decay);
           return std::make_unique<Adam>(groups_of(node, params), static_cast<const AdamOptions&>(o));
         },
         "torch.optim.Adam (L2 weight decay added to the gradient)"});
  r.add({"adamw", adam_keys(),
         [](const YAML::Node& node, const std::string& file, const NamedParams& params) -> std::unique_ptr<Optimizer> {
           return std::make_unique<AdamW>(groups_of(node, params), adam_options(node, file, AdamWOptions{}.weight_decay));
         },
         "torch.optim.AdamW (decoupled weight decay)"});
}

}  // namespace

OptimizerRegistry& optimizer_registry() {
  static OptimizerRegistry* registry = [] {
    auto* r = new OptimizerRegistry("optimizer");
    add_builtins(*r);
    return r;
  }();
  return *registry;
}

std::unique_ptr<Optimizer> make_optimizer(const YAML::Node& node, const NamedParams& params, const std::string& file,
                                          const std::string& path) {
  INGOT_CHECK_AS(node && node.IsMap(), ConfigError, "{}: '{}' must be a map with at least 'type:' ({})",
                 config::where(file, node), path, fmt::join(optimizer_registry().types(), " | "));
  INGOT_CHECK_AS(!decay_groups(params).empty(), ConfigError, "{}: '{}': the model has no parameters to optimize",
                 config::where(file, node), path);
  try {
    return optimizer_registry().make(node, file, path, params);
  } catch (const Error& e) {
    // Config errors already name their line; the optimizer's own option checks (nesterov without
    // momentum, ...) do not know the file.
    if (dynamic_cast<const ConfigError*>(&e) != nullptr && std::string(e.what()).rfind(file, 0) == 0) throw;
    throw ConfigError(fmt::format("{}: '{}': {}", config::where(file, node), path, e.what()));
  }
}

YAML::Node optimizer_to_yaml(const Optimizer& optimizer, bool no_decay_on_bias_and_norm) {
  const GroupOptions& o = optimizer.defaults();
  YAML::Node n;
  n["type"] = optimizer.type();
  n["lr"] = o.lr;
  n["weight_decay"] = o.weight_decay;
  if (optimizer.type() == "sgd") {
    n["momentum"] = o.momentum;
    n["dampening"] = o.dampening;
    n["nesterov"] = o.nesterov;
  } else {
    YAML::Node betas(YAML::NodeType::Sequence);
    betas.push_back(o.beta1);
    betas.push_back(o.beta2);
    betas.SetStyle(YAML::EmitterStyle::Flow);
    n["betas"] = betas;
    n["eps"] = o.eps;
    n["amsgrad"] = o.amsgrad;
  }
  n["no_decay_on_bias_and_norm"] = no_decay_on_bias_and_norm;
  return n;
}

YAML::Node optimizer_defaults_yaml(const YAML::Node& node, const std::string& file) {
  Tensor placeholder = zeros({1, 1});
  placeholder.set_requires_grad(true);
  const std::unique_ptr<Optimizer> optimizer = make_optimizer(node, {{"placeholder", placeholder}}, file);
  const YAML::Node split = node["no_decay_on_bias_and_norm"];
  return optimizer_to_yaml(*optimizer, !split || split.as<bool>());
}

}  // namespace ingot::optim
