// Optimizers from YAML: each type's keys, defaults and ranges come from its OptionList (a list key
// such as betas for options written together); the decay / no-decay parameter split; the resolved
// config.
#include "ingot/optim/optimizer_config.h"

#include <cmath>

#include "ingot/base/error.h"
#include "ingot/ops/creation.h"
#include "ingot/optim/adam.h"
#include "ingot/optim/sgd.h"

#include <fmt/ranges.h>

namespace ingot::optim {

std::vector<GroupSpec> decay_groups(const NamedParams& params, bool split) {
  GroupSpec decay, no_decay;
  no_decay.options["weight_decay"] = 0.0;
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

constexpr const char* kSplitKey = "no_decay_on_bias_and_norm";

/// How many options from `i` on share the config key of option `i` (1 unless a list key).
size_t key_width(const OptionList& list, size_t i) {
  size_t n = 1;
  while (i + n < list.size() && list.specs()[i + n].key == list.specs()[i].key) ++n;
  return n;
}

config::Schema keys_of(const OptionList& list) {
  config::Schema s;
  for (size_t i = 0; i < list.size(); i += key_width(list, i)) {
    const OptionSpec& o = list.specs()[i];
    config::Field f{o.key, config::FieldType::Float, false, {}, {}, {}, nullptr, o.doc};
    if (o.flag) {
      f.type = config::FieldType::Bool;
    } else if (key_width(list, i) > 1) {
      f.type = config::FieldType::List;  // its length and range: options_from_yaml
    } else {
      // A schema bound is inclusive; an open one is left to the group's range check.
      if (std::isfinite(o.range.min)) f.min = o.range.min;
      if (std::isfinite(o.range.max) && !o.range.max_open) f.max = o.range.max;
    }
    s.add(std::move(f));
  }
  if (list.has("weight_decay")) s.boolean(kSplitKey);
  return s;
}

/// `o` (its list's defaults) with the keys `node` sets; `node` has passed keys_of's schema.
GroupOptions options_from_yaml(const YAML::Node& node, const std::string& file, GroupOptions o) {
  const OptionList& list = o.list();
  for (size_t i = 0; i < list.size(); i += key_width(list, i)) {
    const OptionSpec& spec = list.specs()[i];
    const YAML::Node v = node[spec.key];
    if (!v) continue;
    const size_t n = key_width(list, i);
    if (n == 1) {
      o.set_at(i, spec.flag ? (v.as<bool>() ? 1.0 : 0.0) : v.as<double>());
      continue;
    }
    std::vector<double> defaults;
    bool ok = v.IsSequence() && v.size() == n;
    for (size_t k = 0; k < n; ++k) {
      defaults.push_back(list.specs()[i + k].default_value);
      double x = 0.0;
      ok = ok && YAML::convert<double>::decode(v[k], x) && spec.range.contains(x);
      if (ok) o.set_at(i + k, x);
    }
    INGOT_CHECK_AS(ok, ConfigError, "{}: '{}' must be a list of {} numbers {}, like [{}]", config::where(file, v),
                   spec.key, n == 2 ? std::string("two") : std::to_string(n), spec.range.str(),
                   fmt::join(defaults, ", "));
  }
  return o;
}

void add_builtins(OptimizerRegistry& r) {
  r.add(optimizer_type(
      "sgd", SgdOptions::table(),
      [](const std::vector<GroupSpec>& groups, const GroupOptions& o) -> std::unique_ptr<Optimizer> {
        return std::make_unique<SGD>(groups, SgdOptions::table().read(o));
      },
      "torch.optim.SGD (momentum, dampening, nesterov)"));
  r.add(optimizer_type(
      "adam", AdamOptions::table(),
      [](const std::vector<GroupSpec>& groups, const GroupOptions& o) -> std::unique_ptr<Optimizer> {
        return std::make_unique<Adam>(groups, AdamOptions::table().read(o));
      },
      "torch.optim.Adam (L2 weight decay added to the gradient)"));
  r.add(optimizer_type(
      "adamw", AdamWOptions::table(),
      [](const std::vector<GroupSpec>& groups, const GroupOptions& o) -> std::unique_ptr<Optimizer> {
        return std::make_unique<AdamW>(groups, AdamWOptions(AdamWOptions::table().read(o)));
      },
      "torch.optim.AdamW (decoupled weight decay)"));
}

}  // namespace

OptimizerRegistry::Entry optimizer_type(std::string type, const OptionList& options, OptimizerMaker make,
                                        std::string help) {
  const OptionList* list = &options;
  auto factory = [list, make = std::move(make)](const YAML::Node& node, const std::string& file,
                                                const NamedParams& params) {
    const GroupOptions defaults = options_from_yaml(node, file, GroupOptions(*list));
    const bool split = list->has("weight_decay") && (!node[kSplitKey] || node[kSplitKey].as<bool>());
    return make(decay_groups(params, split), defaults);
  };
  return {std::move(type), keys_of(options), std::move(factory), std::move(help), ""};
}

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
  const OptionList& list = o.list();
  YAML::Node n;
  n["type"] = optimizer.type();
  for (size_t i = 0; i < list.size(); i += key_width(list, i)) {
    const OptionSpec& spec = list.specs()[i];
    const size_t width = key_width(list, i);
    if (width > 1) {
      YAML::Node values(YAML::NodeType::Sequence);
      for (size_t k = 0; k < width; ++k) values.push_back(o.at(i + k));
      values.SetStyle(YAML::EmitterStyle::Flow);
      n[spec.key] = values;
    } else if (spec.flag) {
      n[spec.key] = o.at(i) != 0.0;
    } else {
      n[spec.key] = o.at(i);
    }
  }
  if (list.has("weight_decay")) n[kSplitKey] = no_decay_on_bias_and_norm;
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
