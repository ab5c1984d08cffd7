// Pooling geometry (torch's padding / ceil_mode / divisor rules as oneDNN dims) and MAX_POOL2D's
// encoded indices: oneDNN's pooling workspace kept as an opaque layout of the indices output,
// decoded to torch's i64 flat indices (h * W + w into the input plane) for any other reader.
#pragma once

#include <optional>

#include "desc_util.h"
#include "op_families.h"
#include "opaque_layout.h"

namespace ingot::onednn {

struct PoolGeometry {
  dims x, y, kernel, strides, pad_l, pad_r;
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  dt type = dt::f32;
  bool operator==(const PoolGeometry&) const = default;
};

/// x is the pooling's input (or grad_x), y its output (or grad_y); nullopt for what oneDNN
/// cannot run with torch's semantics.
std::optional<PoolGeometry> geometry(const sdk::OpCall& c, const ingot_tensor_desc& x, const ingot_tensor_desc& y);

/// The forward primitive desc for `src` (its own layout) with an `any` destination.
dnnl::pooling_forward::primitive_desc forward_pd(OnednnBackend& be, const PoolGeometry& g,
                                                 const dnnl::memory::desc& src, dnnl::prop_kind prop);

/// torch's i64 indices from oneDNN's workspace (u8 or s32, dense NCHW order).
void decode_workspace(dt type, const void* ws, int64_t* index, const PoolGeometry& g);

/// MAX_POOL2D's indices kept as the blocked forward's oneDNN workspace. Its backward reads the
/// workspace as is; anyone else gets torch's i64 indices through to_strided.
struct PoolIndices final : OpaqueCodec {
  PoolIndices(const PoolGeometry& geometry, const dnnl::memory::desc& src, const dnnl::memory::desc& ws)
      : g(geometry), src_md(src), ws_md(ws) {}
  bool read_by(int32_t op) const override { return op == INGOT_OP_MAX_POOL2D_BWD; }
  void to_strided(const void* src, const ingot_tensor_desc& dst, Exec& ex) const override;

  PoolGeometry g;
  dnnl::memory::desc src_md;  ///< the forward's (blocked) input layout
  dnnl::memory::desc ws_md;
};

/// The encoded indices behind `d`, or nullptr when `d` is not such a tensor of ours.
const PoolIndices* indices_of(OnednnBackend& be, const ingot_tensor_desc& d);

}  // namespace ingot::onednn
