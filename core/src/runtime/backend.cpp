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
  throw_if_error(table_->choose_output_layout(table_->self, op, in, n_in, out, n_out, index, attrs),
                 fmt::format("backend {}: choosing the layout of {} output {}", name_, op_info(op).name, index));
}

void Backend::execute(OpKind op, const ingot_tensor_desc* in, int n_in, const ingot_tensor_desc* out, int n_out,
                      const void* attrs, const ingot_exec_context& ctx) const {
  ingot_status* s = table_->execute(table_->self, op, in, n_in, out, n_out, attrs, &ctx);
  if (s != nullptr) throw_if_error(s, fmt::format("backend {}: {}", name_, op_info(op).name));
}

void Backend::to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                         const ingot_exec_context& ctx) const {
  INGOT_CHECK(table_->to_strided != nullptr, "backend {} made an opaque tensor but cannot reorder it", name_);
  throw_if_error(table_->to_strided(table_->self, &src, &dst, &ctx), fmt::format("backend {}: reorder", name_));
}

void Backend::layout_release(void* handle) const {
  if (table_->layout_release != nullptr) table_->layout_release(table_->self, handle);
}

void* Backend::alloc(size_t bytes) const {
  INGOT_CHECK(table_->alloc != nullptr, "backend {} has no device allocator", name_);
  void* ptr = nullptr;
  throw_if_error(table_->alloc(table_->self, bytes, &ptr), fmt::format("backend {}: allocating {} bytes", name_, bytes));
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

}  // namespace ingot
