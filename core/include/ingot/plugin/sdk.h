// Header-only C++ SDK over the C ABI: plugin authors derive from sdk::BackendImpl and use
// INGOT_PLUGIN(...); trampolines turn exceptions into ingot_status so none crosses the boundary.
#pragma once

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot::sdk {

// ---- status ---------------------------------------------------------------------------------

struct OwnedStatus {
  ingot_status status;
  std::string text;
};

inline void release_status(ingot_status* s) { delete reinterpret_cast<OwnedStatus*>(s); }

/// A status that core releases through its `release` pointer (this plugin's allocator frees it).
inline ingot_status* make_status(int32_t code, const std::string& message) {
  auto* owned = new (std::nothrow) OwnedStatus{};
  if (owned == nullptr) return nullptr;
  owned->text = message;
  owned->status.struct_size = sizeof(ingot_status);
  owned->status.abi_minor = INGOT_ABI_MINOR;
  owned->status.code = code;
  owned->status.message = owned->text.c_str();
  owned->status.release = &release_status;
  return &owned->status;
}

/// Throw inside a plugin to return a specific status code.
class Failure : public std::exception {
 public:
  Failure(int32_t code, std::string message) : code_(code), message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }
  int32_t code() const { return code_; }

 private:
  int32_t code_;
  std::string message_;
};

/// Runs `fn`, turning any exception into a status.
template <class Fn>
ingot_status* guarded(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const Failure& e) {
    return make_status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return make_status(INGOT_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return make_status(INGOT_ERR_RUNTIME, e.what());
  } catch (...) {
    return make_status(INGOT_ERR_RUNTIME, "unknown exception");
  }
}

// ---- descriptors ----------------------------------------------------------------------------

inline int64_t numel(const ingot_tensor_desc& d) {
  int64_t n = 1;
  for (int i = 0; i < d.ndim; ++i) n *= d.shape[i];
  return n;
}

/// Row-major dense (size-1 dims may have any stride).
inline bool is_contiguous(const ingot_tensor_desc& d) {
  if (d.layout != INGOT_LAYOUT_STRIDED) return false;
  int64_t expected = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    if (d.shape[i] != 1 && d.strides[i] != expected) return false;
    expected *= d.shape[i];
  }
  return true;
}

inline int64_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case INGOT_F64:
    case INGOT_I64: return 8;
    case INGOT_F32:
    case INGOT_I32: return 4;
    case INGOT_F16:
    case INGOT_BF16: return 2;
    default: return 1;
  }
}

/// Address of the first element.
template <class T = void>
T* data_ptr(const ingot_tensor_desc& d) {
  return reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
}

/// The op's attribute struct, checked for presence and size.
template <class A>
const A& attr(const void* attrs) {
  const auto* a = static_cast<const A*>(attrs);
  if (a == nullptr || a->struct_size < sizeof(A)) throw Failure(INGOT_ERR_INVALID_ARGUMENT, "missing or short attribute struct");
  return *a;
}

/// One op invocation as a backend sees it.
struct OpCall {
  int32_t op;
  const ingot_tensor_desc* in;
  int32_t n_in;
  const ingot_tensor_desc* out;
  int32_t n_out;
  const void* attrs;
};

// ---- backend ----------------------------------------------------------------------------------

/// Base class of a backend. Override supports() and execute(); the rest is optional.
class BackendImpl {
 public:
  virtual ~BackendImpl() = default;
  virtual bool supports(const OpCall& call) = 0;
  virtual void execute(const OpCall& call, const ingot_exec_context& ctx) = 0;
  /// Return true after setting outputs[index]'s layout, layout_handle and nbytes.
  virtual bool choose_output_layout(const OpCall& call, ingot_tensor_desc* outputs, int index) {
    (void)call, (void)outputs, (void)index;
    return false;
  }
  virtual void to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                          const ingot_exec_context& ctx) {
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
};

namespace detail {
inline BackendImpl* self_of(void* self) { return static_cast<BackendImpl*>(self); }

inline int supports(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                    const ingot_tensor_desc* out, int32_t n_out, const void* attrs) {
  try {
    return self_of(self)->supports(OpCall{op, in, n_in, out, n_out, attrs}) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
inline ingot_status* choose_output_layout(void* self, int32_t op, const ingot_tensor_desc* in,
                                          int32_t n_in, ingot_tensor_desc* out, int32_t n_out,
                                          int32_t index, const void* attrs) {
  return guarded([&] { self_of(self)->choose_output_layout(OpCall{op, in, n_in, out, n_out, attrs}, out, index); });
}
inline ingot_status* execute(void* self, int32_t op, const ingot_tensor_desc* in, int32_t n_in,
                             const ingot_tensor_desc* out, int32_t n_out, const void* attrs,
                             const ingot_exec_context* ctx) {
  return guarded([&] { self_of(self)->execute(OpCall{op, in, n_in, out, n_out, attrs}, *ctx); });
}
inline ingot_status* to_strided(void* self, const ingot_tensor_desc* src, const ingot_tensor_desc* dst,
                                const ingot_exec_context* ctx) {
  return guarded([&] { self_of(self)->to_strided(*src, *dst, *ctx); });
}
inline void layout_retain(void* self, void* handle) {
  try {
    self_of(self)->layout_retain(handle);
  } catch (...) {
  }
}
inline void layout_release(void* self, void* handle) {
  try {
    self_of(self)->layout_release(handle);
  } catch (...) {
  }
}
inline void plan_cache_stats(void* self, ingot_plan_cache_stats* stats) {
  try {
    self_of(self)->plan_cache_stats(*stats);
  } catch (...) {
  }
}
inline const char* impl_name(void* self, int32_t op) {
  try {
    return self_of(self)->impl_name(op);
  } catch (...) {
    return nullptr;
  }
}
inline void destroy(void* self) { delete self_of(self); }
}  // namespace detail

/// Builds the ABI table for a host backend; the table takes ownership of `impl`.
inline ingot_backend make_backend_table(BackendImpl* impl, const char* name, int32_t device_kind,
                                        int32_t priority) {
  // From here on `impl` is only a void* to the compiler. GCC 12 at -O2/-O3 then drops the vtable
  // pointer store of a subclass with internal linkage (a class in an anonymous namespace) as
  // unobservable, and the first virtual call through the table crashes. The empty asm makes the
  // constructed object observable, so its vtable pointer is written.
  asm volatile("" : : "r"(impl) : "memory");
  ingot_backend t{};
  t.struct_size = sizeof(ingot_backend);
  t.abi_minor = INGOT_ABI_MINOR;
  t.self = impl;
  t.name = name;
  t.device_kind = device_kind;
  t.priority = priority;
  t.supports = &detail::supports;
  t.choose_output_layout = &detail::choose_output_layout;
  t.execute = &detail::execute;
  t.to_strided = &detail::to_strided;
  t.layout_retain = &detail::layout_retain;
  t.layout_release = &detail::layout_release;
  t.plan_cache_stats = &detail::plan_cache_stats;
  t.impl_name = &detail::impl_name;
  t.destroy = &detail::destroy;
  return t;
}

/// What a plugin's init hands back: its backends, valid for the process.
class Components {
 public:
  void add(const ingot_backend* backend) { backends_.push_back(backend); }
  void fill(ingot_plugin_components& out) const {
    out.struct_size = sizeof(ingot_plugin_components);
    out.abi_minor = INGOT_ABI_MINOR;
    out.n_backends = static_cast<int32_t>(backends_.size());
    out.backends = backends_.data();
  }

 private:
  std::vector<const ingot_backend*> backends_;
};

/// Logs through the host (no-op when the host gave no logger).
inline void log(const ingot_host_api* host, int32_t level, const char* plugin, const std::string& msg) {
  if (host != nullptr && host->log != nullptr) host->log(host->host, level, plugin, msg.c_str());
}

}  // namespace ingot::sdk

/// Defines the three entry points. PROBE: bool(std::string& reason);
/// INIT: void(const ingot_host_api* host, ingot::sdk::Components& out).
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
    return ingot::sdk::guarded([&] {                                                                   \
      INIT(host, kept);                                                                                \
      kept.fill(*components);                                                                          \
    });                                                                                                \
  }
