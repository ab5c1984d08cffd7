// Pooling geometry and MAX_POOL2D's encoded indices (see pool_indices.h).
#include "pool_indices.h"

#include <omp.h>

#include <algorithm>

#include "exec.h"

namespace ingot::onednn {
namespace {

/// torch's indices from oneDNN's workspace (window-relative argmax, dense NCHW order).
template <class W>
void decode_indices(const W* ws, int64_t* index, const PoolGeometry& g) {
  const int64_t planes = g.y[0] * g.y[1], oh = g.y[2], ow = g.y[3], w = g.x[3], kw = g.kernel[1];
#pragma omp parallel for
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t k = (p * oh + oy) * ow + ox;
        const auto tap = static_cast<int64_t>(ws[k]);
        index[k] = (oy * g.strides[0] - g.pad_l[0] + tap / kw) * w + (ox * g.strides[1] - g.pad_l[1] + tap % kw);
      }
    }
  }
}

}  // namespace

std::optional<PoolGeometry> geometry(const sdk::OpCall& c, const ingot_tensor_desc& x, const ingot_tensor_desc& y) {
  const auto& a = sdk::attr<ingot_attr_pool2d>(c.attrs);
  // u8 / i8: max pooling of quantized values (forward; it commutes with quantization)
  const bool q8_max = c.op == INGOT_OP_MAX_POOL2D && (x.dtype == INGOT_U8 || x.dtype == INGOT_I8);
  if (x.ndim != 4 || y.ndim != 4 || !(is_compute_dtype(x.dtype) || q8_max) || y.dtype != x.dtype) return std::nullopt;
  if (!is_plain_host(x) || !is_plain_host(y)) return std::nullopt;
  PoolGeometry g;
  g.type = to_dnnl(x.dtype);
  g.x = dims_of(x);
  g.y = dims_of(y);
  g.kernel = {a.kernel[0], a.kernel[1]};
  g.strides = {a.stride[0] > 0 ? a.stride[0] : a.kernel[0], a.stride[1] > 0 ? a.stride[1] : a.kernel[1]};
  g.pad_l = {a.padding[0], a.padding[1]};
  g.pad_r = g.pad_l;
  for (size_t d = 0; d < 2; ++d) {
    if (g.kernel[d] < 1 || g.pad_l[d] < 0 || g.pad_l[d] > g.kernel[d] / 2) return std::nullopt;
    // ceil_mode: extend the right padding so that oneDNN produces torch's output size
    const int64_t need = (g.y[d + 2] - 1) * g.strides[d] + g.kernel[d] - g.x[d + 2] - g.pad_l[d];
    g.pad_r[d] = std::max(g.pad_l[d], need);
  }
  const bool is_avg = c.op == INGOT_OP_AVG_POOL2D || c.op == INGOT_OP_AVG_POOL2D_BWD;
  if (is_avg) {
    // oneDNN's include-padding divisor is always kh*kw; torch clips the window at the declared
    // padding, which differs only where ceil_mode added padding: decline those.
    if (a.count_include_pad && g.pad_r != g.pad_l) return std::nullopt;
    g.algorithm = a.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                      : dnnl::algorithm::pooling_avg_exclude_padding;
  }
  return g;
}

dnnl::pooling_forward::primitive_desc forward_pd(OnednnBackend& be, const PoolGeometry& g,
                                                 const dnnl::memory::desc& src, dnnl::prop_kind prop) {
  auto d = dnnl::pooling_forward::desc(prop, g.algorithm, src, dnnl::memory::desc(g.y, g.type, tag::any), g.strides,
                                       g.kernel, g.pad_l, g.pad_r);
  return dnnl::pooling_forward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
}

void decode_workspace(dt type, const void* ws, int64_t* index, const PoolGeometry& g) {
  if (type == dt::u8)
    decode_indices(static_cast<const uint8_t*>(ws), index, g);
  else if (type == dt::s32)
    decode_indices(static_cast<const int32_t*>(ws), index, g);
  else
    throw sdk::Failure(INGOT_ERR_RUNTIME, "cpu_onednn max_pool2d: unexpected oneDNN workspace type");
}

void PoolIndices::to_strided(const void* src, const ingot_tensor_desc& dst, Exec& ex) const {
  if (dst.dtype != INGOT_I64 || !sdk::is_contiguous(dst) || dims_of(dst) != g.y)
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT,
                       "cpu_onednn max_pool2d indices: decoding needs a dense i64 tensor");
  const dnnl::memory::desc plain = plain_md(g.y, ws_md.data_type());
  const size_t slot = ex.reserve(plain.get_size());
  ex.allocate();
  ex.reorder(ws_md, const_cast<void*>(src), plain, ex.ptr(slot));
  decode_workspace(plain.data_type(), ex.ptr(slot), sdk::data_ptr<int64_t>(dst), g);
}

const PoolIndices* indices_of(OnednnBackend& be, const ingot_tensor_desc& d) {
  if (d.layout != INGOT_LAYOUT_OPAQUE) return nullptr;
  const OpaqueHandle* h = be.layouts().find_handle(d.layout_handle);
  return h != nullptr ? dynamic_cast<const PoolIndices*>(h->codec.get()) : nullptr;
}

}  // namespace ingot::onednn
