// Opaque layout handles: ref-counted heap objects holding a oneDNN memory::desc (a blocked
// format), registered so the backend can tell its own handles from any other backend's.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <mutex>
#include <unordered_set>

#include "ingot/plugin/ingot_plugin.h"

namespace ingot::onednn {

class Exec;

/// A handle whose buffer is not the tensor's values in another order but an encoding only some
/// ops read (MAX_POOL2D's indices kept as oneDNN's pooling workspace); every other reader gets
/// the decoded strided tensor through to_strided.
class OpaqueCodec {
 public:
  virtual ~OpaqueCodec() = default;
  /// Whether `op` reads the encoded buffer itself (no other op of ours is ever handed it).
  virtual bool read_by(int32_t op) const = 0;
  /// Decodes `src` (the handle's buffer) into the strided tensor `dst`.
  virtual void to_strided(const void* src, const ingot_tensor_desc& dst, Exec& ex) const = 0;
};

/// What an opaque ingot_tensor_desc's layout_handle points to when this backend made it.
struct OpaqueHandle {
  dnnl::memory::desc md;  ///< the buffer's layout (with a codec: of the encoded buffer)
  int refcount = 1;
  std::shared_ptr<const OpaqueCodec> codec;  ///< null: md lays out the tensor's own values
};

/// Every live handle of this backend (a set, so a foreign pointer is never dereferenced).
class OpaqueRegistry {
 public:
  /// A new handle with one reference (the caller's).
  void* create(const dnnl::memory::desc& md, std::shared_ptr<const OpaqueCodec> codec = nullptr);
  /// The handle's desc, or nullptr when `handle` is not one of ours or holds a codec (its
  /// buffer is not the tensor's values, so no op may read it as data).
  const dnnl::memory::desc* find(void* handle) const;
  /// Any live handle of ours, codec or not; else nullptr.
  const OpaqueHandle* find_handle(void* handle) const;
  /// Whether `handle` is one of our codec handles that `op` reads encoded.
  bool read_by(void* handle, int32_t op) const;
  void retain(void* handle);
  /// Drops a reference; the last one frees the handle.
  void release(void* handle);

 private:
  mutable std::mutex mu_;
  std::unordered_set<OpaqueHandle*> live_;
};

}  // namespace ingot::onednn
