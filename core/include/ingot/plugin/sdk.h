// Header-only C++ SDK over the plugin ABI (C++17, SDK headers only): a plugin derives from the
// base classes of sdk_compute.h (ops), sdk_device.h (device memory, copies, streams, events) and
// sdk_communicator.h (collectives), builds its components with make_*_backend /
// make_communicator and exports the entry points with INGOT_PLUGIN(...). No plugin writes a table
// entry by hand: the SDK's noexcept trampolines turn exceptions into ingot_status.
#pragma once

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "ingot/plugin/abi_layout.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/plugin/sdk_communicator.h"
#include "ingot/plugin/sdk_compute.h"
#include "ingot/plugin/sdk_core.h"
#include "ingot/plugin/sdk_device.h"

namespace ingot::sdk {

/// The three tables of one backend, allocated together and kept for the process.
struct BackendTables {
  ingot_device_table device;
  ingot_compute_table compute;
  ingot_backend backend;
};

/// A backend from a compute side and a device table (both must live for the process).
inline const ingot_backend* make_backend(ComputeImpl* compute, const ingot_device_table& device, const char* name,
                                         int32_t priority) {
  auto* t = new BackendTables{device, make_compute_table(compute), ingot_backend{}};
  t->backend.struct_size = sizeof(ingot_backend);
  t->backend.abi_minor = INGOT_ABI_MINOR;
  t->backend.name = name;
  t->backend.priority = priority;
  t->backend.device = &t->device;
  t->backend.compute = &t->compute;
  return &t->backend;
}

/// A host backend (device kind CPU, one device, host memory from core) over `impl`, which the
/// backend keeps for the process.
inline const ingot_backend* make_host_backend(ComputeImpl* impl, const char* name, int32_t priority) {
  return make_backend(impl, make_host_device_table(), name, priority);
}

/// A device backend whose compute and device sides are one object (a class deriving from both
/// ComputeImpl and DeviceImpl), kept for the process.
template <class Impl>
const ingot_backend* make_device_backend(Impl* impl, const char* name, int32_t device_kind, int32_t priority) {
  return make_backend(static_cast<ComputeImpl*>(impl), make_device_table(static_cast<DeviceImpl*>(impl), device_kind),
                      name, priority);
}

/// What a plugin's init hands back: its components (tables valid for the process).
class Components {
 public:
  void add(const ingot_backend* backend) { add(INGOT_COMPONENT_BACKEND, backend); }
  void add(const ingot_communicator* communicator) { add(INGOT_COMPONENT_COMMUNICATOR, communicator); }
  void fill(ingot_plugin_components& out) const {
    out.struct_size = sizeof(ingot_plugin_components);
    out.abi_minor = INGOT_ABI_MINOR;
    out.n_components = static_cast<int32_t>(components_.size());
    out.components = components_.data();
  }

 private:
  void add(int32_t kind, const void* table) {
    ingot_component c{};
    c.struct_size = sizeof(ingot_component);
    c.abi_minor = INGOT_ABI_MINOR;
    c.kind = kind;
    c.table = table;
    components_.push_back(c);
  }
  std::vector<ingot_component> components_;
};

}  // namespace ingot::sdk

/// Defines the three entry points. KINDS: INGOT_KIND_* bits; PROBE: bool(std::string& reason);
/// INIT: void(const ingot_host_api* host, ingot::sdk::Components& out), run once (a later init
/// hands back the same components); ingot::sdk::host_api() is set before it runs.
#define INGOT_PLUGIN(NAME, VERSION, DESCRIPTION, KINDS, PROBE, INIT)                                   \
  extern "C" INGOT_EXPORT void ingot_plugin_query(ingot_plugin_info* info) {                          \
    info->struct_size = sizeof(ingot_plugin_info);                                                     \
    info->abi_minor = INGOT_ABI_MINOR;                                                                 \
    info->abi_major = INGOT_ABI_MAJOR;                                                                 \
    info->kinds = (KINDS);                                                                             \
    info->name = (NAME);                                                                               \
    info->version = (VERSION);                                                                         \
    info->description = (DESCRIPTION);                                                                 \
  }                                                                                                    \
  extern "C" INGOT_EXPORT int ingot_plugin_probe(char* reason, size_t reason_size) {                  \
    std::string why;                                                                                   \
    bool ok = false;                                                                                   \
    try {                                                                                              \
      ok = PROBE(why);                                                                                 \
    } catch (const std::exception& e) {                                                                \
      why = e.what();                                                                                  \
    } catch (...) {                                                                                    \
      why = "probe threw an unknown exception";                                                        \
    }                                                                                                  \
    if (reason != nullptr && reason_size > 0) std::snprintf(reason, reason_size, "%s", why.c_str());  \
    return ok ? 1 : 0;                                                                                 \
  }                                                                                                    \
  extern "C" INGOT_EXPORT ingot_status* ingot_plugin_init(const ingot_host_api* host,                 \
                                                           ingot_plugin_components* components) {      \
    static ingot::sdk::Components kept;                                                                \
    static bool initialised = false;                                                                   \
    return ingot::sdk::guarded([&] {                                                                   \
      if (!initialised) {                                                                              \
        ingot::sdk::host_api() = host;                                                                 \
        INIT(host, kept);                                                                              \
        initialised = true;                                                                            \
      }                                                                                                \
      kept.fill(*components);                                                                          \
    });                                                                                                \
  }
