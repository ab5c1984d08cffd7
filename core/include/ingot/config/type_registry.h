// TypeRegistry: the objects a config section builds from `type:` (losses, layers, optimizers,
// schedules, datasets, stages, callbacks). Built-ins and extension plugins register the same way;
// each type declares the keys it accepts, so a config is checked before anything runs.
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/config/schema.h"

namespace ingot::config {

/// Who is registering types now: "builtin", or the extension plugin whose register function runs
/// (set by the extension loader), so each type can say where it came from. Defined in the core
/// library, so an extension (built with hidden inline functions) reads the same value.
std::string& registering_origin();

/// Types of one kind (`what`: "loss", "stage", ...), each with its schema and its factory
/// `make(node, file, args...)` returning a Product; `Args` carry what a kind needs beyond its
/// config (a layer's input shape and generators, an optimizer's parameters).
template <class Product, class... Args>
class TypeRegistry {
 public:
  using Factory = std::function<Product(const YAML::Node& node, const std::string& file, Args... args)>;
  struct Entry {
    std::string type;
    Schema schema;  ///< the type's keys, `type` itself not included
    Factory make;
    std::string help;    ///< one line for listings
    std::string origin;  ///< "builtin" or the extension plugin that added it ("" = who registers now)
  };

  explicit TypeRegistry(std::string what) : what_(std::move(what)) {}

  /// Adds a type; throws ConfigError when the name is taken (naming who took it).
  void add(Entry entry) {
    if (entry.origin.empty()) entry.origin = registering_origin();
    if (auto it = entries_.find(entry.type); it != entries_.end())
      throw ConfigError(fmt::format("{} type '{}' from {} is already registered by {}", what_, entry.type, entry.origin,
                                    it->second.origin));
    std::string key = entry.type;
    entries_.emplace(std::move(key), std::move(entry));
  }
  bool has(const std::string& type) const { return entries_.count(type) != 0; }
  /// The entry of `type`; ConfigError "FILE:LINE: unknown <what> type 'x' (did you mean 'y'?);
  /// known: a, b, c" otherwise.
  const Entry& get(const std::string& type, const std::string& file, const YAML::Node& at) const {
    if (auto it = entries_.find(type); it != entries_.end()) return it->second;
    const std::vector<std::string> known = types();
    const std::string hint = closest_match(type, known);
    throw ConfigError(fmt::format("{}: unknown {} type '{}'{}; known: {}", where(file, at), what_, type,
                                  hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                                  fmt::join(known, ", ")));
  }
  /// Checks `node` (a map with `type:`, or a bare type name) against its type's schema and builds it.
  Product make(const YAML::Node& node, const std::string& file, const std::string& path, Args... args) const {
    // (a YAML::Node handle assigned to changes the node it refers to: build a fresh one instead)
    const YAML::Node map = node.IsScalar() ? type_only(node.as<std::string>()) : node;
    if (!map.IsMap() || !map["type"])
      throw ConfigError(fmt::format("{}: {}: expected a map with 'type:' (one of {})", where(file, node), path,
                                    fmt::join(types(), ", ")));
    const Entry& e = get(map["type"].as<std::string>(), file, node.IsScalar() ? node : map["type"]);
    check_foreign_keys(e, map, file, path);
    Schema with_type = e.schema;
    with_type.string("type", true);
    with_type.validate(map, file, path);
    return e.make(map, file, std::forward<Args>(args)...);
  }
  /// Registered type names, sorted.
  std::vector<std::string> types() const {
    std::vector<std::string> out;
    for (const auto& [name, e] : entries_) out.push_back(name);
    return out;
  }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const std::string& what() const { return what_; }

 private:
  /// A key this type lacks but another type of the kind has: "'momentum' does not apply to type
  /// 'adam' (it is sgd's)", clearer than "unknown key".
  void check_foreign_keys(const Entry& e, const YAML::Node& map, const std::string& file,
                          const std::string& path) const {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string key = it->first.Scalar();
      if (e.schema.find(key) != nullptr) continue;
      std::vector<std::string> owners;
      for (const auto& [name, other] : entries_)
        if (other.schema.find(key) != nullptr) owners.push_back(name);
      if (!owners.empty())
        throw ConfigError(fmt::format("{}: '{}.{}' does not apply to type '{}' (it is {}'s)", where(file, it->first),
                                      path, key, e.type, fmt::join(owners, " / ")));
    }
  }

  static YAML::Node type_only(const std::string& type) {
    YAML::Node m(YAML::NodeType::Map);
    m["type"] = type;
    return m;
  }

  std::string what_;
  std::map<std::string, Entry> entries_;
};

}  // namespace ingot::config
