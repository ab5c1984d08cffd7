// select_backends: turns `backend:` into registry state. Core never branches on a backend's
// name: the device kind comes from each backend's table, reasons from the plugin records.
#include "ingot/config/backend_select.h"

#include <algorithm>

#include "ingot/base/error.h"
#include "ingot/config/schema.h"
#include "ingot/runtime/plugin_loader.h"
#include "ingot/runtime/registry.h"

namespace ingot::config {
namespace {

std::string prefix(const std::string& where) { return where.empty() ? std::string() : where + ": "; }

std::vector<const Backend*> available(DeviceKind kind) {
  std::vector<const Backend*> out;
  for (const auto& b : BackendRegistry::instance().backends())
    if (b->device_kind() == kind) out.push_back(b.get());
  std::stable_sort(out.begin(), out.end(), [](const Backend* a, const Backend* b) { return a->priority() > b->priority(); });
  return out;
}

std::vector<std::string> names_of(const std::vector<const Backend*>& list) {
  std::vector<std::string> out;
  for (const Backend* b : list) out.push_back(b->name());
  return out;
}

// Why plugin `name` gave no backend, from its record; "" when there is no record.
std::string record_reason(const std::string& name) {
  const PluginRecord* r = PluginLoader::instance().find(name);
  if (r == nullptr) return "";
  return r->available ? "it registered no backend" : r->reason;
}

// Why there is no CUDA backend: the reason of the plugin named "cuda", the conventional name of
// the CUDA plugin, else of any unavailable plugin whose name mentions it.
std::string cuda_reason() {
  if (std::string r = record_reason("cuda"); !r.empty()) return "cuda plugin: " + r;
  for (const PluginRecord& r : PluginLoader::instance().records())
    if (!r.available && r.name.find("cuda") != std::string::npos) return r.name + " plugin: " + r.reason;
  return "cuda plugin not found";
}

BackendSelection finish(BackendSelection sel, const std::vector<std::string>& restrict) {
  BackendRegistry& reg = BackendRegistry::instance();
  reg.restrict_to(restrict);
  for (const Backend* b : reg.candidates(sel.device.kind)) sel.enabled.push_back(b->name());
  return sel;
}

}  // namespace

BackendSelection select_backends(const std::string& requested, const std::string& where) {
  PluginLoader::instance().load_all();
  BackendRegistry& reg = BackendRegistry::instance();
  BackendSelection sel;
  sel.requested = requested.empty() ? "auto" : requested;
  const auto cuda = available(DeviceKind::CUDA);

  if (sel.requested == "auto") {
    if (cuda.empty()) {
      sel.note = fmt::format("backend auto: no CUDA backend ({}); running on the CPU", cuda_reason());
    } else {
      sel.device = Device{DeviceKind::CUDA, 0};
    }
    return finish(sel, {});
  }
  if (sel.requested == "cpu") {
    return finish(sel, names_of(available(DeviceKind::CPU)));
  }
  if (sel.requested == "cuda" || sel.requested.rfind("cuda:", 0) == 0) {
    if (cuda.empty()) {
      throw BackendMissingError(fmt::format("{}backend {} is required but not available: {}; use 'backend: auto' to fall back to the CPU",
                                            prefix(where), sel.requested, cuda_reason()));
    }
    try {
      sel.device = Device::parse(sel.requested);
    } catch (const ConfigError& e) {
      throw ConfigError(prefix(where) + e.what());
    }
    // The device must exist: every CUDA backend serves the same GPUs, so the first one tells.
    if (sel.device.index >= cuda.front()->device_count())
      throw BackendMissingError(fmt::format("{}backend {}: there is no such device: backend {} serves {} device(s) "
                                            "(cuda:0 .. cuda:{}); use one of them",
                                            prefix(where), sel.requested, cuda.front()->name(),
                                            cuda.front()->device_count(), cuda.front()->device_count() - 1));
    return finish(sel, {});
  }

  // One named backend, or every backend of one named plugin.
  std::vector<const Backend*> chosen;
  if (const Backend* b = reg.find(sel.requested)) {
    chosen.push_back(b);
  } else {
    for (const auto& b : reg.backends())
      if (b->plugin() == sel.requested) chosen.push_back(b.get());
  }
  if (chosen.empty()) {
    std::string reason = record_reason(sel.requested);
    if (reason.empty()) {
      std::vector<std::string> known{"auto", "cpu", "cuda"};
      for (const auto& b : reg.backends()) known.push_back(b->name());
      for (const PluginRecord& r : PluginLoader::instance().records()) known.push_back(r.name);
      const std::string hint = closest_match(sel.requested, known);
      reason = fmt::format("no backend or plugin of that name{}; 'ingot plugins' lists them",
                           hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint));
    }
    throw BackendMissingError(fmt::format("{}backend '{}' is not available: {}", prefix(where), sel.requested, reason));
  }
  sel.device = Device{chosen.front()->device_kind(), 0};
  // Keep the chosen backends and every backend of the other device kinds.
  std::vector<std::string> keep = names_of(chosen);
  for (const auto& b : reg.backends()) {
    const bool same_kind = std::any_of(chosen.begin(), chosen.end(), [&](const Backend* c) { return c->device_kind() == b->device_kind(); });
    if (!same_kind) keep.push_back(b->name());
  }
  return finish(sel, keep);
}

}  // namespace ingot::config
