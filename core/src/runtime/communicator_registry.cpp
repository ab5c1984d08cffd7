// CommunicatorRegistry: validation of communicator tables and lookup by name.
#include "ingot/runtime/communicator_registry.h"

#include <fmt/format.h>

#include "ingot/base/error.h"

namespace ingot {

CommunicatorRegistry& CommunicatorRegistry::instance() {
  static auto* registry = new CommunicatorRegistry();  // never destroyed: plugins are never unloaded
  return *registry;
}

const CommunicatorComponent& CommunicatorRegistry::add(const ingot_communicator* t, const std::string& plugin) {
  constexpr size_t kMinSize = offsetof(ingot_communicator, destroy) + sizeof(ingot_communicator::destroy);
  INGOT_CHECK_AS(t != nullptr && t->struct_size >= kMinSize && t->name != nullptr && *t->name != '\0', PluginError,
                 "plugin {}: communicator table is incomplete or has no name (struct_size {})", plugin,
                 t != nullptr ? t->struct_size : 0);
  INGOT_CHECK_AS(
      t->create != nullptr && t->all_reduce != nullptr && t->broadcast != nullptr && t->all_gather != nullptr &&
          t->reduce_scatter != nullptr && t->barrier != nullptr && t->destroy != nullptr,
      PluginError, "plugin {}: communicator {} lacks an entry (every collective is required)", plugin, t->name);
  INGOT_CHECK_AS(t->device_kind == INGOT_DEVICE_CPU || t->device_kind == INGOT_DEVICE_CUDA, PluginError,
                 "plugin {}: communicator {} has unknown device kind {}", plugin, t->name, t->device_kind);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& c : components_)
    INGOT_CHECK_AS(c.name != t->name, PluginError, "plugin {}: a communicator named '{}' already exists (plugin {})",
                   plugin, t->name, c.plugin);
  components_.push_back({t, t->name, plugin, static_cast<DeviceKind>(t->device_kind)});
  return components_.back();
}

const CommunicatorComponent* CommunicatorRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& c : components_)
    if (c.name == name) return &c;
  return nullptr;
}

const CommunicatorComponent& CommunicatorRegistry::get(const std::string& name) const {
  if (const CommunicatorComponent* c = find(name)) return *c;
  std::string known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& c : components_) known += (known.empty() ? "" : ", ") + c.name;
  }
  throw BackendMissingError(fmt::format("no communicator named '{}' (registered: {}; see `ingot plugins --verbose`)",
                                        name, known.empty() ? "none" : known));
}

}  // namespace ingot
