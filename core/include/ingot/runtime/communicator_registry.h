// CommunicatorRegistry: the communicator components plugins registered (NCCL, gloo-like, test
// fixtures), by name; a Communicator is created from one of them.
#pragma once

#include <deque>
#include <mutex>
#include <string>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/device.h"

namespace ingot {

/// One registered communicator component (kept for the process).
struct CommunicatorComponent {
  const ingot_communicator* table;
  std::string name;
  std::string plugin;
  DeviceKind device_kind;
};

class CommunicatorRegistry {
 public:
  static CommunicatorRegistry& instance();

  /// Registers a component after checking its table; throws PluginError naming the plugin.
  const CommunicatorComponent& add(const ingot_communicator* table, const std::string& plugin);
  /// The component named `name`, or nullptr.
  const CommunicatorComponent* find(const std::string& name) const;
  /// The component named `name`; throws BackendMissingError listing the registered ones.
  const CommunicatorComponent& get(const std::string& name) const;
  /// Every component in registration order (a deque: references stay valid).
  const std::deque<CommunicatorComponent>& components() const { return components_; }

 private:
  CommunicatorRegistry() = default;
  mutable std::mutex mu_;
  std::deque<CommunicatorComponent> components_;
};

}  // namespace ingot
