// SDK basics every component uses: status objects, the exception-to-status guard, the host API a
// plugin was started with, and helpers to read tensor descriptors. Header-only, C++17.
#pragma once

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>

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

/// Runs `fn`, turning any exception into a status (NULL = success).
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

/// Runs `fn` for an entry that returns no status: exceptions are swallowed.
template <class Fn>
void quietly(Fn&& fn) noexcept {
  try {
    fn();
  } catch (...) {
  }
}

/// Throws Failure for a status the host returned (releasing it); no-op for NULL.
inline void check_host(ingot_status* status, const std::string& where) {
  if (status == nullptr) return;
  const int32_t code = status->code;
  std::string msg = where + ": " + (status->message != nullptr ? status->message : "(no message)");
  if (status->release != nullptr) status->release(status);
  throw Failure(code, std::move(msg));
}

// ---- the host ---------------------------------------------------------------------------------

/// The host API this plugin's init received (set by INGOT_PLUGIN; NULL before init).
inline const ingot_host_api*& host_api() {
  static const ingot_host_api* host = nullptr;
  return host;
}

/// Logs through the host (no-op when the host gave no logger).
inline void log(const ingot_host_api* host, int32_t level, const char* plugin, const std::string& msg) {
  if (host != nullptr && host->log != nullptr) host->log(host->host, level, plugin, msg.c_str());
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
    case INGOT_I64:
      return 8;
    case INGOT_F32:
    case INGOT_I32:
      return 4;
    case INGOT_F16:
    case INGOT_BF16:
      return 2;
    default:
      return 1;
  }
}

/// ingot_dtype_name for messages: "float32" ("f32" with short_form), "dtype 12" for a number this
/// SDK does not know.
inline std::string dtype_label(int32_t dtype, bool short_form = false) {
  const char* name = ingot_dtype_name(dtype, short_form ? 1 : 0);
  return name != nullptr ? std::string(name) : "dtype " + std::to_string(dtype);
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
  if (a == nullptr || a->struct_size < sizeof(A))
    throw Failure(INGOT_ERR_INVALID_ARGUMENT, "missing or short attribute struct");
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

  /// The kernel family of the op (the op table's family column).
  ingot_op_family family() const { return ingot_op_family_of(op); }
  /// The device index of the call: its first output's, else its first input's (0 without tensors).
  int32_t device_index() const {
    if (n_out > 0) return out[0].device_index;
    return n_in > 0 ? in[0].device_index : 0;
  }
};

}  // namespace ingot::sdk
