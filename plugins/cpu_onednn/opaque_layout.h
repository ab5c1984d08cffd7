// Opaque layout handles: ref-counted heap objects holding a oneDNN memory::desc (a blocked
// format), registered so the backend can tell its own handles from any other backend's.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <mutex>
#include <unordered_set>

namespace ingot::onednn {

/// What an opaque ingot_tensor_desc's layout_handle points to when this backend made it.
struct OpaqueHandle {
  dnnl::memory::desc md;
  int refcount = 1;
};

/// Every live handle of this backend (a set, so a foreign pointer is never dereferenced).
class OpaqueRegistry {
 public:
  /// A new handle with one reference (the caller's).
  void* create(const dnnl::memory::desc& md);
  /// The handle's desc, or nullptr when `handle` is not one of ours.
  const dnnl::memory::desc* find(void* handle) const;
  void retain(void* handle);
  /// Drops a reference; the last one frees the handle.
  void release(void* handle);

 private:
  mutable std::mutex mu_;
  std::unordered_set<OpaqueHandle*> live_;
};

}  // namespace ingot::onednn
