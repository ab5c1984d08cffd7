// Backend: calls through one ABI table, turning status objects into exceptions.
#include "ingot/runtime/backend.h"

#include <fmt/format.h>

#include "ingot/runtime/error.h"

namespace ingot {

void throw_if_error(ingot_status* status, const std::string& where) {
  if (status == nullptr) return;
  const std::string msg = status->message != nullptr ? status->message : "(no message)";
  const int32_t code = status->code;
  if (status->release != nullptr) status->release(status);
  const std::string text = fmt::format("{}: {}", where, msg);
  if (code == INGOT_ERR_OUT_OF_MEMORY) throw OutOfMemoryError(text);
  throw PluginError(text);
}

Backend::Backend(const ingot_backend* table, std::string plugin)
    : table_(table), name_(table->name != nullptr ? table->name : "?"), plugin_(std::move(plugin)) {}

bool Backend::supports(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out,
                       int n_out, const void* attrs) const {
  return table_->supports(table_->self, op, in, n_in, out, n_out, attrs) != 0;
}

void Backend::choose_output_layout(OpKind op, const ingot_tensor_desc* in, int n_in, ingot_tensor_desc* out,
                                   int n_out, int index, const void* attrs) const {
  if (table_->choose_output_layout == nullptr) return;
  // The context string is built only on failure: this runs for every output of every op.
  ingot_status* s = table_->choose_output_layout(table_->self, op, in, n_in, out, n_out, index, attrs);
  if (s != nullptr)
    throw_if_error(s, fmt::format("backend {}: choosing the layout of {} output {}", name_, op_info(op).name, index));
}

void Backend::execute(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                      const void* attrs, const ingot_exec_context& ctx) const {
  ingot_status* s = table_->execute(table_->self, op, in, n_in, out, n_out, attrs, &ctx);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: {}", name_, op_info(op).name));
}

void Backend::to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                         const ingot_exec_context& ctx) const {
  INGOT_CHECK(table_->to_strided != nullptr, "backend {} made an opaque tensor but cannot reorder it", name_);
  ingot_status* s = table_->to_strided(table_->self, &src, &dst, &ctx);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: reorder", name_));
}

void Backend::layout_release(void* handle) const {
  if (table_->layout_release != nullptr) table_->layout_release(table_->self, handle);
}

void* Backend::alloc(size_t bytes) const {
  INGOT_CHECK(table_->alloc != nullptr, "backend {} has no device allocator", name_);
  void* ptr = nullptr;
  ingot_status* s = table_->alloc(table_->self, bytes, &ptr);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: allocating {} bytes", name_, bytes));
  return ptr;
}

void Backend::free(void* ptr) const {
  if (table_->free != nullptr) table_->free(table_->self, ptr);
}

ingot_plan_cache_stats Backend::plan_cache_stats() const {
  ingot_plan_cache_stats s{};
  s.struct_size = sizeof(s);
  s.abi_minor = INGOT_ABI_MINOR;
  if (table_->plan_cache_stats != nullptr) table_->plan_cache_stats(table_->self, &s);
  return s;
}

std::string Backend::impl_name(OpKind op) const {
  if (table_->impl_name == nullptr) return {};
  const char* n = table_->impl_name(table_->self, op);
  return n != nullptr ? n : "";
}

// ---- ABI 1.2 device entries: read only when the table is long enough to hold them ----------

#define INGOT_BACKEND_HAS(field) INGOT_TABLE_HAS(table_, ingot_backend, field)

void Backend::unsupported(const char* what) const {
  throw Error(fmt::format("backend {} (plugin {}, ABI {}.{}) does not support {}", name_, plugin_, INGOT_ABI_MAJOR,
                          table_->abi_minor, what));
}

ingot_memory_stats Backend::memory_stats(int32_t index) const {
  if (!INGOT_BACKEND_HAS(memory_stats)) unsupported("memory_stats");
  ingot_memory_stats s{};
  s.struct_size = sizeof(s);
  s.abi_minor = INGOT_ABI_MINOR;
  throw_if_error(table_->memory_stats(table_->self, index, &s), fmt::format("backend {}: memory_stats", name_));
  return s;
}

void Backend::reset_peak_memory_stats(int32_t index) const {
  if (!INGOT_BACKEND_HAS(reset_peak_memory_stats)) unsupported("reset_peak_memory_stats");
  throw_if_error(table_->reset_peak_memory_stats(table_->self, index),
                 fmt::format("backend {}: reset_peak_memory_stats", name_));
}

void Backend::empty_cache(int32_t index) const {
  if (!INGOT_BACKEND_HAS(empty_cache)) unsupported("empty_cache");
  throw_if_error(table_->empty_cache(table_->self, index), fmt::format("backend {}: empty_cache", name_));
}

bool Backend::offers_pinned_memory() const {
  return INGOT_BACKEND_HAS(host_alloc_pinned) && INGOT_BACKEND_HAS(host_free_pinned);
}

void* Backend::host_alloc_pinned(size_t bytes) const {
  if (!offers_pinned_memory()) unsupported("pinned host memory");
  void* ptr = nullptr;
  throw_if_error(table_->host_alloc_pinned(table_->self, bytes, &ptr),
                 fmt::format("backend {}: allocating {} bytes of pinned host memory", name_, bytes));
  return ptr;
}

void Backend::host_free_pinned(void* ptr) const {
  if (offers_pinned_memory()) table_->host_free_pinned(table_->self, ptr);
}

bool Backend::offers_copy_async() const { return INGOT_BACKEND_HAS(copy_async); }

void Backend::copy_async(void* dst, DeviceKind dst_kind, const void* src, DeviceKind src_kind, size_t bytes,
                         const ingot_exec_context& ctx) const {
  if (!offers_copy_async()) unsupported("copy_async");
  throw_if_error(table_->copy_async(table_->self, dst, static_cast<int32_t>(dst_kind), src,
                                    static_cast<int32_t>(src_kind), bytes, &ctx),
                 fmt::format("backend {}: asynchronous copy of {} bytes", name_, bytes));
}

void Backend::synchronize(int32_t index) const {
  if (!INGOT_BACKEND_HAS(synchronize)) unsupported("synchronize");
  throw_if_error(table_->synchronize(table_->self, index), fmt::format("backend {}: synchronize", name_));
}

void* Backend::native_stream(int32_t index) const {
  if (!INGOT_BACKEND_HAS(native_stream)) unsupported("native_stream");
  void* stream = nullptr;
  throw_if_error(table_->native_stream(table_->self, index, &stream), fmt::format("backend {}: native_stream", name_));
  return stream;
}

void* Backend::event_create(int32_t index) const {
  // One check for the whole family: an event that can be created can be recorded and timed.
  if (!INGOT_BACKEND_HAS(event_create) || !INGOT_BACKEND_HAS(event_record) || !INGOT_BACKEND_HAS(event_synchronize) ||
      !INGOT_BACKEND_HAS(event_elapsed_ms) || !INGOT_BACKEND_HAS(event_destroy))
    unsupported("events");
  void* event = nullptr;
  throw_if_error(table_->event_create(table_->self, index, &event), fmt::format("backend {}: event_create", name_));
  return event;
}

void Backend::event_record(void* event, const ingot_exec_context& ctx) const {
  throw_if_error(table_->event_record(table_->self, event, &ctx), fmt::format("backend {}: event_record", name_));
}

void Backend::event_synchronize(void* event) const {
  throw_if_error(table_->event_synchronize(table_->self, event), fmt::format("backend {}: event_synchronize", name_));
}

double Backend::event_elapsed_ms(void* start, void* end) const {
  double ms = 0.0;
  throw_if_error(table_->event_elapsed_ms(table_->self, start, end, &ms),
                 fmt::format("backend {}: event_elapsed_ms", name_));
  return ms;
}

void Backend::event_destroy(void* event) const { table_->event_destroy(table_->self, event); }

#undef INGOT_BACKEND_HAS

}  // namespace ingot
