// Backend: core's handle on one backend table (the built-in reference or a plugin's), which
// turns ABI status objects into exceptions that name the backend and the op.
#pragma once

#include <string>

#include "ingot/ops/op_info.h"
#include "ingot/plugin/ingot_plugin.h"
#include "ingot/tensor/device.h"

namespace ingot {

class Backend {
 public:
  /// `table` must outlive the process (plugins are never unloaded); `plugin` names its source.
  Backend(const ingot_backend* table, std::string plugin);

  const std::string& name() const { return name_; }
  const std::string& plugin() const { return plugin_; }
  DeviceKind device_kind() const { return static_cast<DeviceKind>(table_->device_kind); }
  int priority() const { return table_->priority; }
  const ingot_backend* table() const { return table_; }
  bool enabled() const { return enabled_; }
  void set_enabled(bool on) { enabled_ = on; }

  bool supports(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out,
                int n_out, const void* attrs) const;
  /// Lets the backend pick an opaque layout for output `index`; no-op when it has no opinion.
  void choose_output_layout(OpKind op, const ingot_tensor_desc* in, int n_in,
                            ingot_tensor_desc* out, int n_out, int index, const void* attrs) const;
  void execute(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out,
               int n_out, const void* attrs, const ingot_exec_context& ctx) const;
  void to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                  const ingot_exec_context& ctx) const;
  void layout_release(void* handle) const;
  void* alloc(size_t bytes) const;
  void free(void* ptr) const;
  ingot_plan_cache_stats plan_cache_stats() const;
  /// Implementation the backend used for the last plan of `op` ("" when unknown).
  std::string impl_name(OpKind op) const;

 private:
  const ingot_backend* table_;
  std::string name_;
  std::string plugin_;
  bool enabled_ = true;
};

/// Throws PluginError "<where>: <message>" and releases the status; no-op for NULL.
void throw_if_error(ingot_status* status, const std::string& where);

}  // namespace ingot
