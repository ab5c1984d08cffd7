// Backend: core's handle on one backend component (the built-in reference or a plugin's): its
// compute table (ops) and device table (memory, copies, streams, events of each device it serves).
// Turns ABI status objects into exceptions that name the backend, the device and the op.
#pragma once

#include <string>
#include <utility>

#include "ingot/plugin/ingot_plugin.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/device.h"

namespace ingot {

class Backend {
 public:
  /// `table` must outlive the process (plugins are never unloaded); `plugin` names its source.
  /// The registry validates the table before it builds a Backend.
  Backend(const ingot_backend* table, std::string plugin);

  const std::string& name() const { return name_; }
  const std::string& plugin() const { return plugin_; }
  DeviceKind device_kind() const { return static_cast<DeviceKind>(device_->device_kind); }
  int priority() const { return table_->priority; }
  const ingot_backend* table() const { return table_; }
  const ingot_device_table* device_table() const { return device_; }
  const ingot_compute_table* compute_table() const { return compute_; }
  /// The minor ABI version the backend's tables were built with.
  uint32_t abi_minor() const { return table_->abi_minor; }
  bool enabled() const { return enabled_; }
  void set_enabled(bool on) { enabled_ = on; }

  // ---- compute ----------------------------------------------------------------------------
  bool supports(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                const void* attrs) const;
  /// Lets the backend pick an opaque layout for output `index`; no-op when it has no opinion.
  void choose_output_layout(OpKind op, const ingot_tensor_desc* in, int n_in, ingot_tensor_desc* out, int n_out,
                            int index, const void* attrs) const;
  void execute(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
               const void* attrs, const ingot_exec_context& ctx) const;
  void to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context& ctx) const;
  /// The opaque layout the backend runs input `index` of this call fastest in (*layout: a copy of
  /// in[index] with the layout set); false when it has none (or predates ABI 2.5).
  bool choose_input_layout(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                           int index, const void* attrs, ingot_tensor_desc* layout) const;
  /// Reorders the strided `src` into `dst`, in one of this backend's opaque layouts.
  void from_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context& ctx) const;
  /// True when the backend computes this call correctly with out[out_index] written over
  /// in[in_index] (false when it says no, or predates ABI 2.6).
  bool runs_in_place(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                     int out_index, int in_index, const void* attrs) const;
  void layout_release(void* handle) const;
  ingot_plan_cache_stats plan_cache_stats() const;
  /// Implementation the backend used for the last plan of `op` ("" when unknown).
  std::string impl_name(OpKind op) const;

  // ---- devices ----------------------------------------------------------------------------
  /// Number of devices of device_kind() the backend serves (1 for a host backend).
  int32_t device_count() const { return device_count_; }
  /// Throws Error "<device>: backend X serves N device(s) ..." unless 0 <= index < device_count().
  void check_device(int32_t index) const;
  /// True when the backend holds device memory (alloc / free / copy): a device backend.
  bool has_device_memory() const { return device_->alloc != nullptr; }

  // Device memory entries; each throws Error "backend X (plugin P, ABI 2.m) does not support
  // <what>" when the table lacks the entry (host backends, optional entries).
  void* alloc(int32_t device_index, size_t bytes) const;
  void free(int32_t device_index, void* ptr) const;
  /// Host <-> device copy, synchronous for the caller (see ingot_device_table.copy).
  void copy(int32_t device_index, void* dst, DeviceKind dst_kind, const void* src, DeviceKind src_kind, size_t bytes,
            const ingot_exec_context& ctx) const;
  /// The device allocator's counters for device `index`.
  ingot_memory_stats memory_stats(int32_t index) const;
  void reset_peak_memory_stats(int32_t index) const;
  void empty_cache(int32_t index) const;
  bool offers_pinned_memory() const;
  void* host_alloc_pinned(int32_t device_index, size_t bytes) const;
  void host_free_pinned(int32_t device_index, void* ptr) const;
  bool offers_copy_async() const;
  /// Queues a copy on the compute stream and returns (see ingot_device_table.copy_async).
  void copy_async(int32_t device_index, void* dst, DeviceKind dst_kind, const void* src, DeviceKind src_kind,
                  size_t bytes, const ingot_exec_context& ctx) const;
  void synchronize(int32_t index) const;
  void* native_stream(int32_t index) const;
  bool offers_events() const;
  /// Whether the device table has stream_create, stream_destroy and stream_wait_event.
  bool offers_streams() const;
  void* stream_create(int32_t index) const;
  void stream_destroy(int32_t index, void* stream) const;
  /// Work queued later on `stream` (nullptr: the compute stream) waits for `event`.
  void stream_wait_event(int32_t index, void* stream, void* event) const;
  /// Whether the device table has memory_info.
  bool offers_memory_info() const;
  /// {free, total} bytes of device `index` (device table memory_info).
  std::pair<int64_t, int64_t> memory_info(int32_t index) const;
  /// Whether the device table has memory_stats, reset_peak_memory_stats and empty_cache.
  bool offers_memory_stats() const;
  void* event_create(int32_t index) const;
  void event_record(int32_t index, void* event, const ingot_exec_context& ctx) const;
  void event_synchronize(int32_t index, void* event) const;
  double event_elapsed_ms(int32_t index, void* start, void* end) const;
  void event_destroy(int32_t index, void* event) const;

 private:
  [[noreturn]] void unsupported(const char* what) const;

  const ingot_backend* table_;
  const ingot_device_table* device_;
  const ingot_compute_table* compute_;
  std::string name_;
  std::string plugin_;
  int32_t device_count_ = 0;
  bool enabled_ = true;
};

/// Throws PluginError "<where>: <message>" and releases the status; no-op for NULL.
void throw_if_error(ingot_status* status, const std::string& where);

}  // namespace ingot
