// SDK compute side: ComputeImpl, the base class of a backend's ops, and make_compute_table, whose
// noexcept trampolines fill every entry of an ingot_compute_table. Header-only, C++17.
#pragma once

#include "ingot/plugin/sdk_core.h"

namespace ingot::sdk {

/// Base class of a backend's compute side. Override supports() and execute(); the rest is
/// optional. The device of a call is in its descriptors (OpCall::device_index()).
class ComputeImpl {
 public:
  virtual ~ComputeImpl() = default;
  virtual bool supports(const OpCall& call) = 0;
  virtual void execute(const OpCall& call, const ingot_exec_context& ctx) = 0;
  /// Return true after setting outputs[index]'s layout, layout_handle and nbytes.
  virtual bool choose_output_layout(const OpCall& call, ingot_tensor_desc* outputs, int index) {
    (void)call, (void)outputs, (void)index;
    return false;
  }
  virtual void to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context& ctx) {
    (void)src, (void)dst, (void)ctx;
    throw Failure(INGOT_ERR_UNSUPPORTED, "this backend has no opaque layouts");
  }
  virtual void layout_retain(void* handle) { (void)handle; }
  virtual void layout_release(void* handle) { (void)handle; }
  virtual void plan_cache_stats(ingot_plan_cache_stats& stats) { (void)stats; }
  virtual const char* impl_name(int32_t op) {
    (void)op;
    return nullptr;
  }
  /// Return true after setting *layout's layout, layout_handle and nbytes: the layout input
  /// `index` of `call` runs fastest in, for a tensor packed once (ABI 2.5).
  virtual bool choose_input_layout(const OpCall& call, int index, ingot_tensor_desc* layout) {
    (void)call, (void)index, (void)layout;
    return false;
  }
  /// Reorders the strided `src` into `dst`, one of this backend's opaque layouts (ABI 2.5).
  virtual void from_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst, const ingot_exec_context& ctx) {
    (void)src, (void)dst, (void)ctx;
    throw Failure(INGOT_ERR_UNSUPPORTED, "this backend has no opaque layouts");
  }
  /// True if the call gives the same result with outputs[out] written over inputs[in] (one block
  /// of memory, the same bytes and layout) (ABI 2.6).
  virtual bool runs_in_place(const OpCall& call, int out, int in) {
    (void)call, (void)out, (void)in;
    return false;
  }
};

namespace detail {

inline ComputeImpl& compute_of(void* self) { return *static_cast<ComputeImpl*>(self); }

inline int compute_supports(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                            const ingot_tensor_desc* out, int32_t n_out, const void* attrs) noexcept {
  try {
    return compute_of(self).supports(OpCall{op, in, n_in, out, n_out, attrs}) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
inline ingot_status* compute_choose_output_layout(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                                                  ingot_tensor_desc* out, int32_t n_out, int32_t index,
                                                  const void* attrs) noexcept {
  return guarded([&] { compute_of(self).choose_output_layout(OpCall{op, in, n_in, out, n_out, attrs}, out, index); });
}
inline ingot_status* compute_execute(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                                     const ingot_tensor_desc* out, int32_t n_out, const void* attrs,
                                     const ingot_exec_context* ctx) noexcept {
  return guarded([&] { compute_of(self).execute(OpCall{op, in, n_in, out, n_out, attrs}, *ctx); });
}
inline ingot_status* compute_to_strided(void* self, const ingot_tensor_desc* src, const ingot_tensor_desc* dst,
                                        const ingot_exec_context* ctx) noexcept {
  return guarded([&] { compute_of(self).to_strided(*src, *dst, *ctx); });
}
inline void compute_layout_retain(void* self, void* handle) noexcept {
  quietly([&] { compute_of(self).layout_retain(handle); });
}
inline void compute_layout_release(void* self, void* handle) noexcept {
  quietly([&] { compute_of(self).layout_release(handle); });
}
inline void compute_plan_cache_stats(void* self, ingot_plan_cache_stats* stats) noexcept {
  quietly([&] { compute_of(self).plan_cache_stats(*stats); });
}
inline ingot_status* compute_choose_input_layout(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                                                 const ingot_tensor_desc* out, int32_t n_out, int32_t index,
                                                 const void* attrs, ingot_tensor_desc* layout) noexcept {
  return guarded([&] { compute_of(self).choose_input_layout(OpCall{op, in, n_in, out, n_out, attrs}, index, layout); });
}
inline ingot_status* compute_from_strided(void* self, const ingot_tensor_desc* src, const ingot_tensor_desc* dst,
                                          const ingot_exec_context* ctx) noexcept {
  return guarded([&] { compute_of(self).from_strided(*src, *dst, *ctx); });
}
inline int compute_runs_in_place(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                                 const ingot_tensor_desc* out, int32_t n_out, int32_t out_index, int32_t in_index,
                                 const void* attrs) noexcept {
  try {
    return compute_of(self).runs_in_place(OpCall{op, in, n_in, out, n_out, attrs}, out_index, in_index) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
inline const char* compute_impl_name(void* self, int32_t op) noexcept {
  const char* name = nullptr;
  quietly([&] { name = compute_of(self).impl_name(op); });
  return name;
}

}  // namespace detail

/// The compute table of `impl` (which must outlive the table: backends live for the process).
inline ingot_compute_table make_compute_table(ComputeImpl* impl) {
  ingot_compute_table t{};
  t.struct_size = sizeof(ingot_compute_table);
  t.abi_minor = INGOT_ABI_MINOR;
  t.self = impl;
  t.supports = &detail::compute_supports;
  t.choose_output_layout = &detail::compute_choose_output_layout;
  t.execute = &detail::compute_execute;
  t.to_strided = &detail::compute_to_strided;
  t.layout_retain = &detail::compute_layout_retain;
  t.layout_release = &detail::compute_layout_release;
  t.plan_cache_stats = &detail::compute_plan_cache_stats;
  t.impl_name = &detail::compute_impl_name;
  t.choose_input_layout = &detail::compute_choose_input_layout;
  t.from_strided = &detail::compute_from_strided;
  t.runs_in_place = &detail::compute_runs_in_place;
  return t;
}

}  // namespace ingot::sdk
