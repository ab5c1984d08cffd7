// Pooling family: 2-d max and average pooling (NCHW, f32 or bf16) with torch's padding / ceil_mode /
// divisor rules, and both backwards; max pooling of u8 / i8 values (quantized inference, no
// indices), in any of our layouts (an int8 convolution's NHWC output stays NHWC).
// MAX_POOL2D's second output is torch's i64 flat indices h * W + w into the input plane, readable
// by every backend. On dense tensors we decode oneDNN's workspace (the argmax tap of each window)
// into them, and MAX_POOL2D_BWD scatters grad_y through them (a plain OpenMP loop). When the
// forward runs blocked, the indices stay oneDNN's workspace instead (an encoded opaque layout that
// to_strided decodes for any other reader) and the backward is oneDNN's, so grad_x stays blocked.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <vector>

#include "bf16.h"
#include "desc_util.h"
#include "op_families.h"
#include "pool_indices.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) {
  return op == INGOT_OP_MAX_POOL2D || op == INGOT_OP_MAX_POOL2D_BWD || op == INGOT_OP_AVG_POOL2D ||
         op == INGOT_OP_AVG_POOL2D_BWD;
}

/// MAX_POOL2D whose caller reads no indices (indices_unused; inference): no workspace.
bool wants_indices(const sdk::OpCall& c) {
  if (c.op != INGOT_OP_MAX_POOL2D) return false;
  const auto* a = static_cast<const ingot_attr_pool2d*>(c.attrs);
  const size_t end = offsetof(ingot_attr_pool2d, indices_unused) + sizeof(int32_t);
  return a == nullptr || a->struct_size < end || a->indices_unused == 0;
}

/// Forward plan (src in its own layout: dense NCHW or one of our blocked layouts).
std::shared_ptr<Plan> forward_plan(OnednnBackend& be, const sdk::OpCall& c, const PoolGeometry& g,
                                   const dnnl::memory::desc& src) {
  KeyBuilder key(c.op);
  key.add_md(src)
      .add_bytes(g.y.data(), 4 * sizeof(int64_t))
      .add_bytes(c.attrs, sizeof(ingot_attr_pool2d))
      .add(be.threads());
  return be.plan(key.str(), [&] {
    // training mode makes oneDNN record the argmax workspace that the indices come from
    auto prop = wants_indices(c) ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    auto pd = forward_pd(be, g, src, prop);
    Plan p;
    p.prim = dnnl::pooling_forward(pd);
    p.pd = pd;
    return p;
  });
}

std::shared_ptr<Plan> avg_backward_plan(OnednnBackend& be, const sdk::OpCall& c, const PoolGeometry& g) {
  KeyBuilder key(c.op);
  key.add(g.type).add_bytes(g.x.data(), 4 * sizeof(int64_t)).add_bytes(g.y.data(), 4 * sizeof(int64_t));
  key.add_bytes(c.attrs, sizeof(ingot_attr_pool2d)).add(be.threads());
  return be.plan(key.str(), [&] {
    auto src = plain_md(g.x, g.type), dst = plain_md(g.y, g.type);
    auto fd = dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, g.algorithm, src, dst, g.strides, g.kernel,
                                          g.pad_l, g.pad_r);
    auto hint = dnnl::pooling_forward::primitive_desc(fd, be.engine());
    auto d = dnnl::pooling_backward::desc(g.algorithm, src, dst, g.strides, g.kernel, g.pad_l, g.pad_r);
    auto pd = dnnl::pooling_backward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine(), hint);
    Plan p;
    p.prim = dnnl::pooling_backward(pd);
    p.pd = pd;
    p.aux_pd = hint;
    return p;
  });
}

/// Forward (or average-backward) plan for a call, or nullptr for calls this family declines.
std::shared_ptr<Plan> plan_for(OnednnBackend& be, const sdk::OpCall& c, std::optional<PoolGeometry>& g) {
  if (c.op == INGOT_OP_MAX_POOL2D) {
    if (c.n_in != 1 || c.n_out != 2 || c.out[1].dtype != INGOT_I64) return nullptr;
    // u8 / i8 (quantized inference): values only, no indices
    if ((c.in[0].dtype == INGOT_U8 || c.in[0].dtype == INGOT_I8) && wants_indices(c)) return nullptr;
    if (!sdk::is_contiguous(c.out[1]) && indices_of(be, c.out[1]) == nullptr) return nullptr;
  } else if (c.n_in != 1 || c.n_out != 1) {
    return nullptr;
  }
  const bool bwd = c.op == INGOT_OP_AVG_POOL2D_BWD;
  g = bwd ? geometry(c, c.out[0], c.in[0]) : geometry(c, c.in[0], c.out[0]);
  if (!g) return nullptr;
  if (bwd) {
    if (!sdk::is_contiguous(c.in[0]) || !sdk::is_contiguous(c.out[0])) return nullptr;
    return avg_backward_plan(be, c, *g);
  }
  const dnnl::memory::desc* blocked = be.opaque_md(c.in[0]);
  if (blocked == nullptr && !sdk::is_contiguous(c.in[0])) return nullptr;
  if (c.out[0].layout == INGOT_LAYOUT_STRIDED ? !sdk::is_contiguous(c.out[0]) : be.opaque_md(c.out[0]) == nullptr)
    return nullptr;
  // oneDNN pools integers in NHWC only (NCHW or blocked is a "ref" loop): u8 / i8 in another
  // layout is staged to NHWC
  const bool q8 = g->type == dt::u8 || g->type == dt::s8;
  const dnnl::memory::desc nhwc(g->x, g->type, tag::acdb);
  if (blocked == nullptr) return forward_plan(be, c, *g, q8 ? nhwc : plain_md(g->x, g->type));
  auto p = forward_plan(be, c, *g, *blocked);
  if (q8 && (!p->prim || is_ref_impl(p->impl))) p = forward_plan(be, c, *g, nhwc);
  return p;
}

// ---- MAX_POOL2D_BWD from torch's i64 indices (any backend's forward) ----

/// Scatters grad_y into each grad_x plane through the indices, adding in f32 (torch's opmath for
/// bf16, where overlapping windows send several gradients to one input) and storing once.
template <class T>
void max_pool_bwd(const sdk::OpCall& c) {
  const ingot_tensor_desc &gy = c.in[0], &idx = c.in[2], &gx = c.out[0];
  const int64_t planes = gx.shape[0] * gx.shape[1], in_plane = gx.shape[2] * gx.shape[3];
  const int64_t out_plane = gy.shape[2] * gy.shape[3];
  const T* g = sdk::data_ptr<const T>(gy);
  const int64_t* index = sdk::data_ptr<int64_t>(idx);
  T* out = sdk::data_ptr<T>(gx);
#pragma omp parallel
  {
    std::vector<float> acc(std::is_same_v<T, float> ? 0 : static_cast<size_t>(in_plane));
#pragma omp for
    for (int64_t p = 0; p < planes; ++p) {
      float* dst = acc.data();
      if constexpr (std::is_same_v<T, float>) dst = out + p * in_plane;  // f32 adds in place
      std::fill(dst, dst + in_plane, 0.f);
      for (int64_t k = p * out_plane; k < (p + 1) * out_plane; ++k) {
        if (index[k] >= 0 && index[k] < in_plane) dst[index[k]] += load_f32(g, k);
      }
      if constexpr (!std::is_same_v<T, float>) {
        for (int64_t i = 0; i < in_plane; ++i) store_f32(out + p * in_plane, i, dst[i]);
      }
    }
  }
}

bool max_pool_bwd_ok(const sdk::OpCall& c) {
  if (c.n_in != 3 || c.n_out != 1) return false;
  const ingot_tensor_desc &gy = c.in[0], &idx = c.in[2], &gx = c.out[0];
  const bool value_dtype = gy.dtype == INGOT_F32 || (gy.dtype == INGOT_BF16 && is_compute_dtype(INGOT_BF16));
  if (gy.ndim != 4 || gx.ndim != 4 || idx.ndim != 4 || !value_dtype || gx.dtype != gy.dtype || idx.dtype != INGOT_I64)
    return false;
  if (!sdk::is_contiguous(gy) || !sdk::is_contiguous(idx) || !sdk::is_contiguous(gx)) return false;
  return gy.shape[0] == gx.shape[0] && gy.shape[1] == gx.shape[1] && sdk::numel(idx) == sdk::numel(gy) &&
         sdk::numel(gx) > 0;
}

// ---- MAX_POOL2D_BWD from our encoded indices: oneDNN's backward in the forward's layout ----

/// The encoded indices of a backward call this path runs (geometry as in the forward, grad_y
/// and grad_x ours or dense), else nullptr.
const PoolIndices* encoded_bwd(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 3 || c.n_out != 1) return nullptr;
  const PoolIndices* idx = indices_of(be, c.in[2]);
  if (idx == nullptr) return nullptr;
  const std::optional<PoolGeometry> g = geometry(c, c.out[0], c.in[0]);
  if (!g || !(*g == idx->g)) return nullptr;
  for (const ingot_tensor_desc* t : {&c.in[0], &c.out[0]}) {
    if (be.opaque_md(*t) == nullptr && !sdk::is_contiguous(*t)) return nullptr;
  }
  return idx;
}

std::shared_ptr<Plan> max_backward_plan(OnednnBackend& be, const sdk::OpCall& c, const PoolIndices& idx) {
  const PoolGeometry& g = idx.g;
  KeyBuilder key(c.op);
  key.add_md(idx.src_md).add_bytes(g.y.data(), 4 * sizeof(int64_t)).add_bytes(c.attrs, sizeof(ingot_attr_pool2d));
  key.add(be.threads());
  return be.plan(key.str(), [&] {
    auto hint = forward_pd(be, g, idx.src_md, dnnl::prop_kind::forward_training);
    auto d =
        dnnl::pooling_backward::desc(g.algorithm, idx.src_md, hint.dst_desc(), g.strides, g.kernel, g.pad_l, g.pad_r);
    auto pd = dnnl::pooling_backward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine(), hint);
    if (pd.workspace_desc() != idx.ws_md)
      throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "max_pool2d_bwd: workspace layout differs from the forward's");
    Plan p;
    p.prim = dnnl::pooling_backward(pd);
    p.pd = pd;
    p.aux_pd = hint;
    return p;
  });
}

void run_max_bwd_encoded(const sdk::OpCall& c, Exec& ex, const PoolIndices& idx) {
  OnednnBackend& be = ex.backend();
  auto p = max_backward_plan(be, c, idx);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn max_pool2d_bwd: " + p->impl);
  const Exec::Staged gy = ex.stage(*be.md_of(c.in[0]), sdk::data_ptr(c.in[0]), p->pd.diff_dst_desc());
  const Exec::Staged gx = ex.stage(*be.md_of(c.out[0]), sdk::data_ptr(c.out[0]), p->pd.diff_src_desc());
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_DIFF_DST, gy.want, ex.staged_input(gy));
  ex.bind(*p, DNNL_ARG_WORKSPACE, idx.ws_md, sdk::data_ptr(c.in[2]));
  ex.bind(*p, DNNL_ARG_DIFF_SRC, gx.want, ex.staged_output(gx));
  ex.run(*p, c.op, scratch);
  ex.flush(gx);
}

// ---- the family ----

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.op == INGOT_OP_MAX_POOL2D_BWD) {
    const PoolIndices* idx = encoded_bwd(be, c);
    if (idx == nullptr) return max_pool_bwd_ok(c);
    auto p = max_backward_plan(be, c, *idx);
    return p->prim && !is_ref_impl(p->impl);
  }
  std::optional<PoolGeometry> g;
  auto p = plan_for(be, c, g);
  return p && p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  if (c.op == INGOT_OP_MAX_POOL2D_BWD) {
    if (const PoolIndices* idx = encoded_bwd(be, c)) return run_max_bwd_encoded(c, ex, *idx);
    if (!max_pool_bwd_ok(c)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn max_pool2d_bwd: unsupported call");
    be.note_impl(c.op, "ingot:omp_index_scatter");
    return c.out[0].dtype == INGOT_BF16 ? max_pool_bwd<uint16_t>(c) : max_pool_bwd<float>(c);
  }
  std::optional<PoolGeometry> g;
  auto p = plan_for(be, c, g);
  if (!p || !p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn pooling: unsupported call");
  if (c.op == INGOT_OP_AVG_POOL2D_BWD) {
    size_t scratch = ex.reserve_scratchpad(*p);
    ex.allocate();
    ex.bind(*p, DNNL_ARG_DIFF_DST, p->pd.diff_dst_desc(), sdk::data_ptr(c.in[0]));
    ex.bind(*p, DNNL_ARG_DIFF_SRC, p->pd.diff_src_desc(), sdk::data_ptr(c.out[0]));
    return ex.run(*p, c.op, scratch);
  }
  const dnnl::memory::desc dst = p->pd.dst_desc();
  const dnnl::memory::desc* out_blocked = be.opaque_md(c.out[0]);
  const dnnl::memory::desc user_dst = out_blocked != nullptr ? *out_blocked : plain_md(g->y, g->type);
  const bool dst_temp = user_dst != dst;
  const bool is_max = wants_indices(c);  // false too for a max pool whose indices nobody reads
  const dnnl::memory::desc ws = is_max ? p->pd.workspace_desc() : dnnl::memory::desc();
  // encoded indices: oneDNN writes its workspace straight into the indices tensor
  const PoolIndices* encoded = is_max ? indices_of(be, c.out[1]) : nullptr;
  if (encoded != nullptr && encoded->ws_md != ws)
    throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cpu_onednn max_pool2d: indices layout of another geometry");
  const bool decode = is_max && encoded == nullptr;
  const dnnl::memory::desc ws_plain = decode ? plain_md(g->y, ws.data_type()) : dnnl::memory::desc();
  const dnnl::memory::desc* in_blocked = be.opaque_md(c.in[0]);
  const Exec::Staged src =
      ex.stage(in_blocked != nullptr ? *in_blocked : plain_md(g->x, g->type), sdk::data_ptr(c.in[0]), p->pd.src_desc());
  const size_t dst_slot = dst_temp ? ex.reserve(dst.get_size()) : Exec::npos;
  const size_t ws_slot = decode ? ex.reserve(ws.get_size()) : Exec::npos;
  const size_t ws_plain_slot = decode && ws != ws_plain ? ex.reserve(ws_plain.get_size()) : Exec::npos;
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  void* y = dst_temp ? ex.ptr(dst_slot) : sdk::data_ptr(c.out[0]);
  ex.bind(*p, DNNL_ARG_SRC, p->pd.src_desc(), ex.staged_input(src));
  ex.bind(*p, DNNL_ARG_DST, dst, y);
  if (is_max) ex.bind(*p, DNNL_ARG_WORKSPACE, ws, decode ? ex.ptr(ws_slot) : sdk::data_ptr(c.out[1]));
  ex.run(*p, c.op, scratch);
  if (dst_temp) ex.reorder(dst, y, user_dst, sdk::data_ptr(c.out[0]));
  if (!decode) return;
  void* w = ex.ptr(ws_slot);
  if (ws_plain_slot != Exec::npos) {
    ex.reorder(ws, w, ws_plain, ex.ptr(ws_plain_slot));
    w = ex.ptr(ws_plain_slot);
  }
  decode_workspace(ws.data_type(), w, sdk::data_ptr<int64_t>(c.out[1]), *g);
}

bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (c.op == INGOT_OP_MAX_POOL2D_BWD) {  // blocked grad_x where the indices are encoded
    const PoolIndices* idx = encoded_bwd(be, c);
    if (idx == nullptr || index != 0) return false;
    auto p = max_backward_plan(be, c, *idx);
    return p->prim && set_opaque_output(be, outputs, 0, p->pd.diff_src_desc());
  }
  if (c.op == INGOT_OP_AVG_POOL2D_BWD || be.opaque_md(c.in[0]) == nullptr) return false;  // dense in, dense out
  std::optional<PoolGeometry> g;
  auto p = plan_for(be, c, g);
  if (!p || !p->prim) return false;
  if (index == 0) return set_opaque_output(be, outputs, 0, p->pd.dst_desc());
  // oneDNN's bf16 backward rounds to bf16 after each gradient it adds where windows overlap (torch
  // adds in f32): there the indices are decoded to i64 and our scatter adds in f32.
  const bool overlapping = g->strides[0] < g->kernel[0] || g->strides[1] < g->kernel[1];
  if (index != 1 || !wants_indices(c) || (g->type != dt::f32 && overlapping)) return false;
  const dnnl::memory::desc ws = p->pd.workspace_desc();
  ingot_tensor_desc& o = outputs[1];
  o.layout = INGOT_LAYOUT_OPAQUE;
  o.layout_handle = be.layouts().create(ws, std::make_shared<PoolIndices>(*g, p->pd.src_desc(), ws));
  o.nbytes = static_cast<int64_t>(ws.get_size());
  return true;
}

}  // namespace

const OpFamily& pool_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout};
  return f;
}

}  // namespace ingot::onednn
