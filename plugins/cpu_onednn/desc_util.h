// Helpers between Ingot's ABI tensor descriptors and oneDNN memory descriptors, plus the plan
// key builder (raw bytes of everything a primitive depends on).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <string>
#include <string_view>

#include "ingot/plugin/sdk.h"

namespace ingot::onednn {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

/// True for the fused activations a conv or matmul applies as a oneDNN post-op.
bool fusable_activation(int32_t activation);
/// Appends `activation` (not NONE) to `po` as an eltwise post-op: relu, gelu (erf or tanh), or clip
/// to [0, 6] for ReLU6.
void append_activation(dnnl::post_ops& po, int32_t activation);

/// oneDNN data type of an Ingot dtype; dt::undef when oneDNN has none (f64, i64, bool, f16).
dt to_dnnl(int32_t dtype);
/// Dims of a descriptor (a 0-dim tensor becomes [1]).
dims dims_of(const ingot_tensor_desc& d);
/// Memory desc from shape + strides. Strides of size-1 dims are normalised so that oneDNN
/// recognises plain formats; stride 0 (broadcast views) is left to the caller to reject.
dnnl::memory::desc strided_md(const ingot_tensor_desc& d);
/// Row-major contiguous desc.
dnnl::memory::desc plain_md(const dims& shape, dt type);
/// All strides positive (or the dim has size 1) — oneDNN cannot express stride 0 or negatives.
bool has_positive_strides(const ingot_tensor_desc& d);
/// Host tensor, a dtype oneDNN knows, at least one element.
bool is_plain_host(const ingot_tensor_desc& d);
/// dtypes the compute primitives accept: f32, and bf16 from AVX-512 core up (native from
/// AVX512_BF16, emulated below it; either way oneDNN computes in f32 and rounds once, like the
/// reference; AVX2 has no bf16 kernels in oneDNN 2.6); never f16 / f64 / integers.
bool is_compute_dtype(int32_t dtype);
/// "ref:..." kernels are oneDNN's slow reference loops: the backend declines those.
inline bool is_ref_impl(const std::string& impl) { return impl.rfind("ref", 0) == 0; }
/// Name of the ISA oneDNN dispatches to on this CPU ("avx512_core_bf16", ...).
std::string effective_isa_name();

/// Builds a plan key from raw bytes: op, descriptors, attribute structs, thread count. Keys of
/// plain tensors fit the inline buffer, so a dispatch does not allocate for its key.
class KeyBuilder {
 public:
  explicit KeyBuilder(int32_t op) { add(op); }
  template <class T>
  KeyBuilder& add(const T& v) {
    return add_bytes(&v, sizeof(T));
  }
  KeyBuilder& add_bytes(const void* p, size_t n) {
    if (p == nullptr || n == 0) return *this;
    if (spill_.empty() && size_ + n <= kInline) {
      std::memcpy(inline_ + size_, p, n);
      size_ += n;
      return *this;
    }
    if (spill_.empty()) spill_.assign(inline_, size_);
    spill_.append(static_cast<const char*>(p), n);
    return *this;
  }
  /// Shape, strides, dtype and layout (for opaque layouts, the oneDNN desc itself).
  KeyBuilder& add_desc(const ingot_tensor_desc& d, const dnnl::memory::desc* opaque_md);
  /// Plain strided descs as dims + strides (compact); blocked ones as the whole C struct.
  KeyBuilder& add_md(const dnnl::memory::desc& md);
  std::string_view str() const { return spill_.empty() ? std::string_view(inline_, size_) : std::string_view(spill_); }

 private:
  static constexpr size_t kInline = 512;
  char inline_[kInline];
  size_t size_ = 0;
  std::string spill_;  ///< used once the key outgrows the inline buffer (blocked layouts)
};

}  // namespace ingot::onednn
