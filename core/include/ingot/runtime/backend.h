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

  // ABI 1.2 device entries. Each throws Error "backend X (plugin P, ABI 1.m) does not support
  // <what>" when the table lacks the entry (older plugins, host backends).
  /// The device allocator's counters for device `index`.
  ingot_memory_stats memory_stats(int32_t index) const;
  void reset_peak_memory_stats(int32_t index) const;
  void empty_cache(int32_t index) const;
  bool offers_pinned_memory() const;
  void* host_alloc_pinned(size_t bytes) const;
  void host_free_pinned(void* ptr) const;
  bool offers_copy_async() const;
  /// Queues a copy on the compute stream and returns (see ingot_backend.copy_async).
  void copy_async(void* dst, DeviceKind dst_kind, const void* src, DeviceKind src_kind, size_t bytes,
                  const ingot_exec_context& ctx) const;
  void synchronize(int32_t index) const;
  void* native_stream(int32_t index) const;
  void* event_create(int32_t index) const;
  void event_record(void* event, const ingot_exec_context& ctx) const;
  void event_synchronize(void* event) const;
  double event_elapsed_ms(void* start, void* end) const;
  void event_destroy(void* event) const;

 private:
  [[noreturn]] void unsupported(const char* what) const;

  const ingot_backend* table_;
  std::string name_;
  std::string plugin_;
  bool enabled_ = true;
};

/// Throws PluginError "<where>: <message>" and releases the status; no-op for NULL.
void throw_if_error(ingot_status* status, const std::string& where);

}  // namespace ingot
