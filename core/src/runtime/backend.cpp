// Backend: calls through one backend's compute and device tables, turning status objects into
// exceptions; optional device entries are read only when the table holds them.
#include "ingot/runtime/backend.h"

#include <fmt/format.h>

#include "ingot/base/error.h"

namespace ingot {

void throw_if_error(ingot_status* status, const std::string& where) {
  if (status == nullptr) return;
  const std::string msg = status->message != nullptr ? status->message : "(no message)";
  const int32_t code = status->code;
  if (status->release != nullptr) status->release(status);
  const std::string text = fmt::format("{}: {}", where, msg);
  if (code == INGOT_ERR_OUT_OF_MEMORY) throw OutOfMemoryError(text);
  if (code == INGOT_ERR_TIMEOUT) throw TimeoutError(text);
  throw PluginError(text);
}

Backend::Backend(const ingot_backend* table, std::string plugin)
    : table_(table),
      device_(table->device),
      compute_(table->compute),
      name_(table->name != nullptr ? table->name : "?"),
      plugin_(std::move(plugin)),
      device_count_(table->device->device_count(table->device->self)) {}

// ---- compute ------------------------------------------------------------------------------

#define INGOT_COMPUTE_HAS(field) INGOT_TABLE_HAS(compute_, ingot_compute_table, field)

bool Backend::supports(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                       const void* attrs) const {
  return compute_->supports(compute_->self, op, in, n_in, out, n_out, attrs) != 0;
}

void Backend::choose_output_layout(OpKind op, const ingot_tensor_desc* in, int n_in, ingot_tensor_desc* out, int n_out,
                                   int index, const void* attrs) const {
  if (!INGOT_COMPUTE_HAS(choose_output_layout)) return;
  // The context string is built only on failure: this runs for every output of every op.
  ingot_status* s = compute_->choose_output_layout(compute_->self, op, in, n_in, out, n_out, index, attrs);
  if (s != nullptr)
    throw_if_error(s, fmt::format("backend {}: choosing the layout of {} output {}", name_, op_info(op).name, index));
}

void Backend::execute(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                      const void* attrs, const ingot_exec_context& ctx) const {
  ingot_status* s = compute_->execute(compute_->self, op, in, n_in, out, n_out, attrs, &ctx);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: {}", name_, op_info(op).name));
}

void Backend::to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                         const ingot_exec_context& ctx) const {
  INGOT_CHECK(INGOT_COMPUTE_HAS(to_strided), "backend {} made an opaque tensor but cannot reorder it", name_);
  ingot_status* s = compute_->to_strided(compute_->self, &src, &dst, &ctx);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: reorder", name_));
}

void Backend::layout_release(void* handle) const {
  if (INGOT_COMPUTE_HAS(layout_release)) compute_->layout_release(compute_->self, handle);
}

ingot_plan_cache_stats Backend::plan_cache_stats() const {
  ingot_plan_cache_stats s{};
  s.struct_size = sizeof(s);
  s.abi_minor = INGOT_ABI_MINOR;
  if (INGOT_COMPUTE_HAS(plan_cache_stats)) compute_->plan_cache_stats(compute_->self, &s);
  return s;
}

bool Backend::choose_input_layout(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out,
                                  int n_out, int index, const void* attrs, ingot_tensor_desc* layout) const {
  if (!INGOT_COMPUTE_HAS(choose_input_layout) || !INGOT_COMPUTE_HAS(from_strided)) return false;
  *layout = in[index];
  ingot_status* s = compute_->choose_input_layout(compute_->self, op, in, n_in, out, n_out, index, attrs, layout);
  if (s != nullptr)
    throw_if_error(s, fmt::format("backend {}: choosing the layout of {} input {}", name_, op_info(op).name, index));
  return layout->layout == INGOT_LAYOUT_OPAQUE;
}

void Backend::from_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                           const ingot_exec_context& ctx) const {
  INGOT_CHECK(INGOT_COMPUTE_HAS(from_strided), "backend {} cannot reorder into its layouts", name_);
  ingot_status* s = compute_->from_strided(compute_->self, &src, &dst, &ctx);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: reorder into its layout", name_));
}

bool Backend::runs_in_place(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                            int out_index, int in_index, const void* attrs) const {
  if (!INGOT_COMPUTE_HAS(runs_in_place)) return false;
  return compute_->runs_in_place(compute_->self, static_cast<int32_t>(op), in, n_in, out, n_out, out_index, in_index,
                                 attrs) != 0;
}

std::string Backend::impl_name(OpKind op) const {
  if (!INGOT_COMPUTE_HAS(impl_name)) return {};
  const char* n = compute_->impl_name(compute_->self, op);
  return n != nullptr ? n : "";
}

#undef INGOT_COMPUTE_HAS

// ---- devices ------------------------------------------------------------------------------

#define INGOT_DEVICE_HAS(field) INGOT_TABLE_HAS(device_, ingot_device_table, field)

void Backend::unsupported(const char* what) const {
  throw Error(fmt::format("backend {} (plugin {}, ABI {}.{}) does not support {}", name_, plugin_, INGOT_ABI_MAJOR,
                          table_->abi_minor, what));
}

void Backend::check_device(int32_t index) const {
  if (index >= 0 && index < device_count_) return;
  const DeviceKind kind = device_kind();
  const std::string range = device_count_ <= 0 ? std::string("none")
                            : device_count_ == 1
                                ? Device{kind, 0}.str()
                                : fmt::format("{} .. {}", Device{kind, 0}.str(), Device{kind, device_count_ - 1}.str());
  throw Error(fmt::format("{}: no such device: backend {} (plugin {}) serves {} device{} ({}); use an index below {}",
                          Device{kind, index}.str(), name_, plugin_, device_count_, device_count_ == 1 ? "" : "s",
                          range, device_count_));
}

void* Backend::alloc(int32_t device_index, size_t bytes) const {
  if (!has_device_memory()) unsupported("device memory (host memory belongs to core)");
  void* ptr = nullptr;
  ingot_status* s = device_->alloc(device_->self, device_index, bytes, &ptr);
  if (s != nullptr)
    throw_if_error(s, fmt::format("backend {}: allocating {} bytes on device {}", name_, bytes, device_index));
  return ptr;
}

void Backend::free(int32_t device_index, void* ptr) const {
  if (has_device_memory()) device_->free(device_->self, device_index, ptr);
}

void Backend::copy(int32_t device_index, void* dst, DeviceKind dst_kind, const void* src, DeviceKind src_kind,
                   size_t bytes, const ingot_exec_context& ctx) const {
  if (!INGOT_DEVICE_HAS(copy)) unsupported("copies");
  throw_if_error(device_->copy(device_->self, device_index, dst, static_cast<int32_t>(dst_kind), src,
                               static_cast<int32_t>(src_kind), bytes, &ctx),
                 fmt::format("backend {}: copy of {} bytes", name_, bytes));
}

ingot_memory_stats Backend::memory_stats(int32_t index) const {
  if (!INGOT_DEVICE_HAS(memory_stats)) unsupported("memory_stats");
  ingot_memory_stats s{};
  s.struct_size = sizeof(s);
  s.abi_minor = INGOT_ABI_MINOR;
  throw_if_error(device_->memory_stats(device_->self, index, &s), fmt::format("backend {}: memory_stats", name_));
  return s;
}

void Backend::reset_peak_memory_stats(int32_t index) const {
  if (!INGOT_DEVICE_HAS(reset_peak_memory_stats)) unsupported("reset_peak_memory_stats");
  throw_if_error(device_->reset_peak_memory_stats(device_->self, index),
                 fmt::format("backend {}: reset_peak_memory_stats", name_));
}

void Backend::empty_cache(int32_t index) const {
  if (!INGOT_DEVICE_HAS(empty_cache)) unsupported("empty_cache");
  throw_if_error(device_->empty_cache(device_->self, index), fmt::format("backend {}: empty_cache", name_));
}

bool Backend::offers_pinned_memory() const {
  return INGOT_DEVICE_HAS(host_alloc_pinned) && INGOT_DEVICE_HAS(host_free_pinned);
}

void* Backend::host_alloc_pinned(int32_t device_index, size_t bytes) const {
  if (!offers_pinned_memory()) unsupported("pinned host memory");
  void* ptr = nullptr;
  throw_if_error(device_->host_alloc_pinned(device_->self, device_index, bytes, &ptr),
                 fmt::format("backend {}: allocating {} bytes of pinned host memory", name_, bytes));
  return ptr;
}

void Backend::host_free_pinned(int32_t device_index, void* ptr) const {
  if (offers_pinned_memory()) device_->host_free_pinned(device_->self, device_index, ptr);
}

bool Backend::offers_copy_async() const { return INGOT_DEVICE_HAS(copy_async); }

void Backend::copy_async(int32_t device_index, void* dst, DeviceKind dst_kind, const void* src, DeviceKind src_kind,
                         size_t bytes, const ingot_exec_context& ctx) const {
  if (!offers_copy_async()) unsupported("copy_async");
  throw_if_error(device_->copy_async(device_->self, device_index, dst, static_cast<int32_t>(dst_kind), src,
                                     static_cast<int32_t>(src_kind), bytes, &ctx),
                 fmt::format("backend {}: asynchronous copy of {} bytes", name_, bytes));
}

void Backend::synchronize(int32_t index) const {
  if (!INGOT_DEVICE_HAS(synchronize)) unsupported("synchronize");
  throw_if_error(device_->synchronize(device_->self, index), fmt::format("backend {}: synchronize", name_));
}

void* Backend::native_stream(int32_t index) const {
  if (!INGOT_DEVICE_HAS(native_stream)) unsupported("native_stream");
  void* stream = nullptr;
  throw_if_error(device_->native_stream(device_->self, index, &stream),
                 fmt::format("backend {}: native_stream", name_));
  return stream;
}

bool Backend::offers_memory_stats() const {
  return INGOT_DEVICE_HAS(memory_stats) && INGOT_DEVICE_HAS(reset_peak_memory_stats) && INGOT_DEVICE_HAS(empty_cache);
}

bool Backend::offers_events() const {
  // One check for the whole family: an event that can be created can be recorded and timed.
  return INGOT_DEVICE_HAS(event_create) && INGOT_DEVICE_HAS(event_record) && INGOT_DEVICE_HAS(event_synchronize) &&
         INGOT_DEVICE_HAS(event_elapsed_ms) && INGOT_DEVICE_HAS(event_destroy);
}

bool Backend::offers_streams() const {
  return INGOT_DEVICE_HAS(stream_create) && INGOT_DEVICE_HAS(stream_destroy) && INGOT_DEVICE_HAS(stream_wait_event);
}

void* Backend::stream_create(int32_t index) const {
  if (!offers_streams()) unsupported("streams");
  void* stream = nullptr;
  throw_if_error(device_->stream_create(device_->self, index, &stream),
                 fmt::format("backend {}: stream_create", name_));
  return stream;
}

void Backend::stream_destroy(int32_t index, void* stream) const {
  device_->stream_destroy(device_->self, index, stream);
}

void Backend::stream_wait_event(int32_t index, void* stream, void* event) const {
  if (!offers_streams()) unsupported("streams");
  throw_if_error(device_->stream_wait_event(device_->self, index, stream, event),
                 fmt::format("backend {}: stream_wait_event", name_));
}

bool Backend::offers_memory_info() const { return INGOT_DEVICE_HAS(memory_info); }

std::pair<int64_t, int64_t> Backend::memory_info(int32_t index) const {
  if (!offers_memory_info()) unsupported("memory_info");
  int64_t free_bytes = 0, total_bytes = 0;
  throw_if_error(device_->memory_info(device_->self, index, &free_bytes, &total_bytes),
                 fmt::format("backend {}: memory_info", name_));
  return {free_bytes, total_bytes};
}

void* Backend::event_create(int32_t index) const {
  if (!offers_events()) unsupported("events");
  void* event = nullptr;
  throw_if_error(device_->event_create(device_->self, index, &event), fmt::format("backend {}: event_create", name_));
  return event;
}

void Backend::event_record(int32_t index, void* event, const ingot_exec_context& ctx) const {
  throw_if_error(device_->event_record(device_->self, index, event, &ctx),
                 fmt::format("backend {}: event_record", name_));
}

void Backend::event_synchronize(int32_t index, void* event) const {
  throw_if_error(device_->event_synchronize(device_->self, index, event),
                 fmt::format("backend {}: event_synchronize", name_));
}

double Backend::event_elapsed_ms(int32_t index, void* start, void* end) const {
  double ms = 0.0;
  throw_if_error(device_->event_elapsed_ms(device_->self, index, start, end, &ms),
                 fmt::format("backend {}: event_elapsed_ms", name_));
  return ms;
}

void Backend::event_destroy(int32_t index, void* event) const { device_->event_destroy(device_->self, index, event); }

#undef INGOT_DEVICE_HAS

}  // namespace ingot
