// init_from: parse, rename, filter, load, report.
#include "ingot/train/init_from.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fnmatch.h>

#include <algorithm>

#include "ingot/base/error.h"
#include "ingot/io/safetensors.h"
#include "ingot/io/state_dict.h"

namespace ingot::train {

config::Schema init_from_schema() {
  config::Schema s;
  s.string("path", /*required=*/true).boolean("strict").any("prefix_map").any("ignore");
  return s;
}

InitFrom parse_init_from(const YAML::Node& node, const std::string& file) {
  InitFrom f;
  const auto where = [&](const YAML::Node& n) { return fmt::format("{}:{}", file, n.Mark().line + 1); };
  if (node.IsScalar()) {
    f.path = node.as<std::string>();
    return f;
  }
  INGOT_CHECK_AS(node.IsMap(), ConfigError, "{}: init_from: a path, or {{path, strict, prefix_map, ignore}}",
                 where(node));
  init_from_schema().validate(node, file, "init_from");
  f.path = node["path"].as<std::string>();
  if (node["strict"]) f.strict = node["strict"].as<bool>();
  if (const YAML::Node m = node["prefix_map"]) {
    INGOT_CHECK_AS(m.IsMap(), ConfigError, "{}: init_from.prefix_map: a map of prefixes, e.g. {{\"module.\": \"\"}}",
                   where(m));
    for (const auto& kv : m) f.prefix_map.emplace_back(kv.first.as<std::string>(), kv.second.IsNull() ? "" : kv.second.as<std::string>());
  }
  if (const YAML::Node ig = node["ignore"]) {
    INGOT_CHECK_AS(ig.IsSequence(), ConfigError, "{}: init_from.ignore: a list of patterns, e.g. [fc.*]", where(ig));
    for (const YAML::Node& p : ig) f.ignore.push_back(p.as<std::string>());
  }
  return f;
}

std::string InitFromReport::line(const std::string& path) const {
  const auto some = [](const std::vector<std::string>& v) {
    return v.size() <= 6 ? fmt::format("{}", fmt::join(v, ", "))
                         : fmt::format("{}, ... ({} in all)", fmt::join(v.begin(), v.begin() + 6, ", "), v.size());
  };
  std::string out = fmt::format("init_from {}: {} tensor(s) loaded", path, loaded.size());
  if (!missing.empty()) out += fmt::format("; missing, kept as initialised: {}", some(missing));
  if (!unexpected.empty()) out += fmt::format("; unexpected, not used: {}", some(unexpected));
  if (!ignored.empty()) out += fmt::format("; ignored: {}", some(ignored));
  return out;
}

InitFromReport load_init_from(const InitFrom& spec, nn::Module& model) {
  io::SafetensorsFile weights;
  try {
    weights = io::load_safetensors(spec.path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("init_from: {}", e.what()));  // (the file's own line names the path)
  }
  InitFromReport report;
  std::map<std::string, Tensor> renamed;
  for (const std::string& key : weights.order) {
    std::string name = key;
    for (const auto& [from, to] : spec.prefix_map)
      if (name.rfind(from, 0) == 0) {
        name = to + name.substr(from.size());
        break;
      }
    if (std::any_of(spec.ignore.begin(), spec.ignore.end(),
                    [&](const std::string& p) { return ::fnmatch(p.c_str(), name.c_str(), 0) == 0; })) {
      report.ignored.push_back(name);
      continue;
    }
    renamed[name] = weights.tensors.at(key);
  }
  const nn::StateDict mine = model.state_dict();
  std::map<std::string, Tensor> usable;
  for (const auto& [name, t] : mine) {
    const auto it = renamed.find(name);
    if (it == renamed.end()) {
      report.missing.push_back(name);
      continue;
    }
    INGOT_CHECK_AS(it->second.shape() == t.shape(), InputError,
                   "init_from {}: '{}' has shape {} in the file and {} in the model (a different layer size: leave it out "
                   "with init_from.ignore)",
                   spec.path, name, it->second.shape().str(), t.shape().str());
    usable[name] = it->second;
    report.loaded.push_back(name);
  }
  for (const auto& [name, t] : renamed)
    if (std::none_of(mine.begin(), mine.end(), [&](const auto& m) { return m.first == name; }))
      report.unexpected.push_back(name);
  if (spec.strict && (!report.missing.empty() || !report.unexpected.empty()))
    throw InputError(fmt::format("{} (init_from is strict: set init_from: {{path: ..., strict: false}} to load "
                                 "what matches, or rename keys with prefix_map)",
                                 report.line(spec.path)));
  io::require_finite(io::NamedTensors(usable.begin(), usable.end()), "init_from " + spec.path);
  model.load_state_dict(usable, /*strict=*/false);
  return report;
}

}  // namespace ingot::train
