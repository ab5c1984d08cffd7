// Optimizers from YAML: schema, per-type key checks, defaults equal to torch.optim's, and the
// decay / no-decay parameter split.
#include "ingot/optim/optimizer_config.h"

#include <algorithm>

#include "ingot/optim/adam.h"
#include "ingot/optim/sgd.h"
#include "ingot/runtime/error.h"

namespace ingot::optim {

namespace {

const std::vector<std::string> kSgdKeys = {"momentum", "dampening", "nesterov"};
const std::vector<std::string> kAdamKeys = {"betas", "eps", "amsgrad"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

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

config::Schema optimizer_schema() {
  config::Schema s;
  s.string("type", true, {"sgd", "adam", "adamw"});
  s.number("lr", 0.0);
  s.number("weight_decay", 0.0);
  s.number("momentum", 0.0);
  s.number("dampening", 0.0, 1.0);
  s.boolean("nesterov");
  s.add(config::Field{"betas", config::FieldType::List, false, {}, {}, {}, nullptr, "[beta1, beta2], each in [0, 1)"});
  s.number("eps", 0.0);
  s.boolean("amsgrad");
  s.boolean("no_decay_on_bias_and_norm");
  return s;
}

std::unique_ptr<Optimizer> make_optimizer(const YAML::Node& node, const NamedParams& params, const std::string& file,
                                          const std::string& path) {
  INGOT_CHECK_AS(node && node.IsMap(), ConfigError, "{}: '{}' must be a map with at least 'type: sgd|adam|adamw'",
                 config::where(file, node), path);
  optimizer_schema().validate(node, file, path);
  const std::string type = node["type"].as<std::string>();
  const std::vector<std::string>& foreign = type == "sgd" ? kAdamKeys : kSgdKeys;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    INGOT_CHECK_AS(!contains(foreign, key), ConfigError, "{}: '{}.{}' does not apply to type '{}' (it is {}'s)",
                   config::where(file, kv.first), path, key, type, type == "sgd" ? "adam / adamw" : "sgd");
  }
  auto num = [&](const char* key, double fallback) { return node[key] ? node[key].as<double>() : fallback; };
  auto flag = [&](const char* key, bool fallback) { return node[key] ? node[key].as<bool>() : fallback; };
  const std::vector<GroupSpec> groups = decay_groups(params, flag("no_decay_on_bias_and_norm", true));
  INGOT_CHECK_AS(!groups.empty(), ConfigError, "{}: '{}': the model has no parameters to optimize",
                 config::where(file, node), path);
  try {
    if (type == "sgd") {
      SgdOptions o;
      o.lr = num("lr", o.lr);
      o.momentum = num("momentum", o.momentum);
      o.dampening = num("dampening", o.dampening);
      o.weight_decay = num("weight_decay", o.weight_decay);
      o.nesterov = flag("nesterov", o.nesterov);
      return std::make_unique<SGD>(groups, o);
    }
    AdamWOptions o;
    if (type == "adam") o.weight_decay = AdamOptions{}.weight_decay;
    o.lr = num("lr", o.lr);
    o.eps = num("eps", o.eps);
    o.weight_decay = num("weight_decay", o.weight_decay);
    o.amsgrad = flag("amsgrad", o.amsgrad);
    if (const YAML::Node betas = node["betas"]) {
      bool ok = betas.size() == 2;
      for (size_t i = 0; ok && i < 2; ++i) {
        double b = -1.0;
        ok = YAML::convert<double>::decode(betas[i], b) && b >= 0.0 && b < 1.0;
        (i == 0 ? o.beta1 : o.beta2) = b;
      }
      INGOT_CHECK_AS(ok, ConfigError, "{}: '{}.betas' must be a list of two numbers in [0, 1), like [0.9, 0.999]",
                     config::where(file, betas), path);
    }
    if (type == "adam") return std::make_unique<Adam>(groups, static_cast<const AdamOptions&>(o));
    return std::make_unique<AdamW>(groups, o);
  } catch (const ConfigError& e) {  // option checks of the optimizer itself (nesterov without momentum, ...)
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

}  // namespace ingot::optim
