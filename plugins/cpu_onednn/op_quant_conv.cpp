// QCONV2D as a oneDNN int8 convolution: x u8 | i8 (NCHW or one of our layouts), i8 OIHW weights
// per tensor or per output channel, output f32 / i32 / u8 / i8. oneDNN 2.6's int8 convolutions
// take output scales only at creation, so a plan holds x_scale * w_scale[o] (and 1 / y_scale): a
// static-quantization layer has fixed scales, and calls without values (supports, choosing the
// layout) use a plan with unit scales, which picks the same kernel and formats. Zero points are
// runtime arguments; the bias is a binary-add post-op after the output scale (the op table's
// order, exact in f32), then ReLU, then a requantized output multiplies by 1 / y_scale and adds
// y_zp before rounding (within 1 of the reference near ties). The source zero point is given only
// when nonzero: oneDNN's fastest (brgemm) kernels have none. Formats are `any`: the output keeps
// the kernel's layout (an opaque one, NHWC for int8) for the next op of ours, and the weights are
// packed once into the kernel's format (packed_weights.h).
// That fused form is exact only with VNNI and, for an i32 output, accumulators within 2^24. Every
// other call takes the exact path: the source in pieces (int8_pieces.h) through a plan without
// zero points, the partial accumulators summed, then the zero points subtracted here — x_zp times
// the weights' sum over each output's window, w_zp[o] times the window sums of x - x_zp (padding
// holds x_zp and adds nothing, as in the reference) — and the exact epilogue loop.
#include <optional>
#include <string>
#include <vector>

#include "desc_util.h"
#include "int8_pieces.h"
#include "op_families.h"
#include "op_quant_common.h"

namespace ingot::onednn {
namespace {

using namespace quant;

bool handles(int32_t op) { return op == INGOT_OP_QCONV2D; }

struct Geometry {
  dims x, w, y;  // w is [g, O/g, C/g, kh, kw] when grouped
  dims strides, dilates, pad_l, pad_r;
  int64_t groups = 1;
  dt xt = dt::u8;
};

struct QConvCall {
  Geometry g;
  QOperands ops;
  bool has_bias = false, relu = false, per_channel_scale = false;
  dnnl::memory::desc x_user, w_user, y_user;
};

/// What a plan fuses beyond the geometry.
struct Variant {
  QKind kind = QKind::F32;  ///< I32 for the raw accumulator
  dt yt = dt::f32;
  bool has_bias = false, relu = false, x_zp = false, y_zp = false;
  bool pieces = false;  ///< the exact path's plan: u8 pieces, s32 out, no zero points
};

std::optional<QConvCall> analyse(OnednnBackend& be, const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
  if (c.n_in < 6 || c.n_out != 1) return std::nullopt;
  const ingot_tensor_desc &x = c.in[0], &w = c.in[3], &y = c.out[0];
  if (!is_q8(x.dtype) || w.dtype != INGOT_I8 || x.ndim != 4 || w.ndim != 4 || y.ndim != 4) return std::nullopt;
  if (!is_plain_host(x) || !is_plain_host(w) || !is_plain_host(y)) return std::nullopt;
  if (w.layout != INGOT_LAYOUT_STRIDED || !has_positive_strides(w)) return std::nullopt;
  for (const ingot_tensor_desc* t : {&x, &y}) {
    if (t->layout == INGOT_LAYOUT_STRIDED ? !has_positive_strides(*t) : be.opaque_md(*t) == nullptr)
      return std::nullopt;
  }
  if (a.groups < 1 || x.shape[1] != w.shape[1] * a.groups || w.shape[0] % a.groups != 0 || y.shape[1] != w.shape[0])
    return std::nullopt;
  QConvCall q;
  auto ops = operands(c, a.has_bias != 0, a.activation, w.shape[0]);
  if (!ops) return std::nullopt;
  q.ops = *ops;
  q.has_bias = a.has_bias != 0;
  q.relu = a.activation == INGOT_ACT_RELU;
  q.per_channel_scale = sdk::numel(c.in[4]) > 1;
  Geometry& g = q.g;
  g.groups = a.groups;
  g.xt = to_dnnl(x.dtype);
  g.x = dims_of(x);
  g.y = dims_of(y);
  g.w = dims_of(w);
  const int64_t* s = w.strides;
  q.w_user = strided_md(w);
  if (g.groups > 1) {
    g.w = {g.groups, g.w[0] / g.groups, g.w[1], g.w[2], g.w[3]};
    q.w_user = dnnl::memory::desc(g.w, dt::s8, dims{s[0] * g.w[1], s[0], s[1], s[2], s[3]});
  }
  g.strides = {a.stride[0], a.stride[1]};
  g.dilates = {a.dilation[0] - 1, a.dilation[1] - 1};  // oneDNN counts the gap, torch the step
  g.pad_l = {a.padding[0], a.padding[1]};
  g.pad_r = g.pad_l;
  q.x_user = *be.md_of(x);
  q.y_user = *be.md_of(y);
  return q;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const Geometry& g, const Variant& v, const std::vector<float>& oscale,
                               float inv_y) {
  KeyBuilder key(INGOT_OP_QCONV2D);
  for (const dims* d : {&g.x, &g.w, &g.y, &g.strides, &g.dilates, &g.pad_l})
    key.add(d->size()).add_bytes(d->data(), d->size() * sizeof(int64_t));
  key.add(g.xt).add(v.kind).add(v.yt).add(v.has_bias).add(v.relu).add(v.x_zp).add(v.y_zp).add(v.pieces);
  key.add(inv_y).add(be.threads()).add_bytes(oscale.data(), oscale.size() * sizeof(float));
  return be.plan(key.str(), [&] {
    dnnl::primitive_attr attr = OnednnBackend::user_scratchpad_attr();
    if (v.x_zp) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    if (v.kind != QKind::I32) {
      attr.set_output_scales(oscale.size() > 1 ? 1 << 1 : 0, oscale);
      dnnl::post_ops po;
      if (v.has_bias) po.append_binary(dnnl::algorithm::binary_add, plain_md({1, g.y[1], 1, 1}, dt::f32));
      if (v.relu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      if (v.kind == QKind::Q8) po.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, inv_y, 0.f);
      attr.set_post_ops(po);
      if (v.kind == QKind::Q8 && v.y_zp) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    }
    auto any = [](const dims& d, dt t) { return dnnl::memory::desc(d, t, tag::any); };
    auto d = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             any(g.x, v.pieces ? dt::u8 : g.xt), any(g.w, dt::s8), dnnl::memory::desc(),
                                             any(g.y, v.yt), g.strides, g.dilates, g.pad_l, g.pad_r);
    auto pd = dnnl::convolution_forward::primitive_desc(d, attr, be.engine());
    Plan p;
    p.prim = dnnl::convolution_forward(pd);
    p.pd = pd;
    return p;
  });
}

Variant fused_variant(const QConvCall& q, bool x_zp, bool y_zp) {
  Variant v;
  v.kind = q.ops.kind;
  v.yt = q.y_user.data_type();
  v.has_bias = q.has_bias;
  v.relu = q.relu;
  v.x_zp = x_zp;
  v.y_zp = y_zp && v.kind == QKind::Q8;
  return v;
}

Variant pieces_variant() {
  Variant v;
  v.kind = QKind::I32;
  v.yt = dt::s32;
  v.pieces = true;
  return v;
}

/// The reduction length of one output: input channels per group times the kernel's taps.
int64_t reduction(const Geometry& g) { return g.w[g.w.size() - 3] * g.w[g.w.size() - 2] * g.w.back(); }

/// Whether the fused plan computes exactly what the op table defines for these values.
bool fused_is_exact(const QConvCall& q, const QValues& v) {
  constexpr int64_t kF32Exact = int64_t{1} << 24, kMaxProduct = 255 * 128;
  if (!int8_products_exact() || !v.w_zp_zero) return false;
  return q.ops.kind != QKind::I32 || reduction(q.g) * kMaxProduct <= kF32Exact;
}

/// Unit scales of the call's mask: plans made without values (same kernel and formats).
std::vector<float> unit_scales(const QConvCall& q) {
  return std::vector<float>(q.per_channel_scale ? static_cast<size_t>(q.g.y[1]) : 1, 1.f);
}

/// The plan execute() would use without knowing the zero points' values: the no-zero-point one.
std::shared_ptr<Plan> probe_plan(OnednnBackend& be, const QConvCall& q) {
  return get_plan(be, q.g, fused_variant(q, false, false), unit_scales(q), 1.f);
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto q = analyse(be, c);
  if (!q || !piece_split(reduction(q->g), true)) return false;
  std::vector<std::shared_ptr<Plan>> plans{get_plan(be, q->g, pieces_variant(), {}, 1.f)};
  if (int8_products_exact()) {
    plans.push_back(probe_plan(be, *q));
    plans.push_back(get_plan(be, q->g, fused_variant(*q, true, true), unit_scales(*q), 1.f));
  }
  for (const auto& p : plans) {
    if (!p->prim || is_ref_impl(p->impl)) return false;
  }
  return true;
}

/// Binds the weights: dense ones packed once and cached (packed_weights.h), others staged.
void bind_weights(Exec& ex, Plan& p, const QConvCall& q, const sdk::OpCall& c, const Exec::Staged& staged) {
  const dnnl::memory::desc want = p.pd.weights_desc();
  if (staged.slot == Exec::npos && q.w_user != want) {
    const void* packed =
        ex.backend().packed_weights().get(ex, q.w_user, sdk::data_ptr(c.in[3]), q.w_user.get_size(), want);
    return ex.bind(p, DNNL_ARG_WEIGHTS, want, const_cast<void*>(packed));
  }
  ex.bind(p, DNNL_ARG_WEIGHTS, want, ex.staged_input(staged));
}

/// Sums of x - x_zp over each output's window and group, s[n][group][oh][ow] (x dense NCHW;
/// padding taps hold x_zp and add nothing), in wrapping i32 arithmetic as the accumulator.
template <class T>
void window_sums(const T* x, const Geometry& g, int32_t x_zp, int32_t* s) {
  const int64_t c_all = g.x[1], h = g.x[2], w = g.x[3], groups = g.groups, cg = c_all / groups;
  const int64_t oh = g.y[2], ow = g.y[3], kh = g.w[g.w.size() - 2], kw = g.w.back();
#pragma omp parallel for schedule(static)
  for (int64_t ng = 0; ng < g.x[0] * groups; ++ng) {
    const int64_t n = ng / groups, c0 = (ng % groups) * cg;
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        uint32_t sum = 0;
        for (int64_t c = c0; c < c0 + cg; ++c) {
          for (int64_t i = 0; i < kh; ++i) {
            const int64_t iy = oy * g.strides[0] - g.pad_l[0] + i * (g.dilates[0] + 1);
            if (iy < 0 || iy >= h) continue;
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t ix = ox * g.strides[1] - g.pad_l[1] + j * (g.dilates[1] + 1);
              if (ix >= 0 && ix < w) sum += static_cast<uint32_t>(x[((n * c_all + c) * h + iy) * w + ix] - x_zp);
            }
          }
        }
        s[(ng * oh + oy) * ow + ox] = static_cast<int32_t>(sum);
      }
    }
  }
}

void run_fused(const sdk::OpCall& c, Exec& ex, const QConvCall& q, QValues& v) {
  OnednnBackend& be = ex.backend();
  const bool x_zp = v.x_zp != 0;
  std::vector<float> oscale = v.scale;
  if (!q.per_channel_scale) oscale.resize(1);
  const Variant var = fused_variant(q, x_zp, v.y_zp != 0);
  auto p = get_plan(be, q.g, var, oscale, v.inv_y_scale);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qconv2d: " + p->impl);
  const Exec::Staged xs = ex.stage(q.x_user, sdk::data_ptr(c.in[0]), p->pd.src_desc());
  const bool w_dense = sdk::is_contiguous(c.in[3]);
  const Exec::Staged ws = ex.stage(q.w_user, sdk::data_ptr(c.in[3]), w_dense ? q.w_user : p->pd.weights_desc());
  const Exec::Staged ys = ex.stage(q.y_user, sdk::data_ptr(c.out[0]), p->pd.dst_desc());
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_SRC, p->pd.src_desc(), ex.staged_input(xs));
  bind_weights(ex, *p, q, c, ws);
  ex.bind(*p, DNNL_ARG_DST, p->pd.dst_desc(), ex.staged_output(ys));
  if (x_zp) ex.bind(*p, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, plain_md({1}, dt::s32), &v.x_zp);
  if (var.has_bias)
    ex.bind(*p, DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, plain_md({1, q.g.y[1], 1, 1}, dt::f32),
            v.bias.data());
  if (var.y_zp) ex.bind(*p, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, plain_md({1}, dt::s32), &v.y_zp);
  ex.run(*p, c.op, scratch);
  ex.flush(ys);
}

/// acc[n][o][oy][ox] -= z * (the sum of w[o] over the taps of that output's window that fall
/// inside x), in wrapping i32 arithmetic; acc dense NCHW.
void subtract_weight_window_sums(int32_t* acc, const ingot_tensor_desc& w, const Geometry& g, int32_t z) {
  const int64_t o_all = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t* st = w.strides;
  const auto* wp = sdk::data_ptr<const int8_t>(w);
  std::vector<int32_t> taps(static_cast<size_t>(o_all * kh * kw));  // sum over the channels
  for (int64_t o = 0; o < o_all; ++o)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        int32_t sum = 0;
        for (int64_t c = 0; c < cg; ++c) sum += wp[o * st[0] + c * st[1] + i * st[2] + j * st[3]];
        taps[static_cast<size_t>((o * kh + i) * kw + j)] = sum;
      }
  const int64_t h = g.x[2], wd = g.x[3], oh = g.y[2], ow = g.y[3], batch = g.y[0], plane = oh * ow;
  const auto zu = static_cast<uint32_t>(z);
  // z times the taps inside the image at each output position (the same for every sample)...
  std::vector<uint32_t> map(static_cast<size_t>(o_all * plane));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < o_all * oh; ++r) {
    const int64_t o = r / oh, oy = r % oh;
    for (int64_t ox = 0; ox < ow; ++ox) {
      uint32_t sum = 0;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t iy = oy * g.strides[0] - g.pad_l[0] + i * (g.dilates[0] + 1);
        if (iy < 0 || iy >= h) continue;
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t ix = ox * g.strides[1] - g.pad_l[1] + j * (g.dilates[1] + 1);
          if (ix >= 0 && ix < wd) sum += static_cast<uint32_t>(taps[static_cast<size_t>((o * kh + i) * kw + j)]);
        }
      }
      map[static_cast<size_t>(r * ow + ox)] = zu * sum;
    }
  }
  // ...subtracted from each sample's plane, in memory order (wrapping, as the s32 sum does).
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < batch * o_all; ++r) {
    int32_t* a = acc + r * plane;
    const uint32_t* m = map.data() + (r % o_all) * plane;
    for (int64_t p = 0; p < plane; ++p) a[p] = static_cast<int32_t>(static_cast<uint32_t>(a[p]) - m[p]);
  }
}

/// acc[n, o] -= w_zp[o] * window sums of x - x_zp over o's group; acc dense NCHW, x dense NCHW.
void subtract_source_window_sums(int32_t* acc, const void* x, const Geometry& g, const QValues& v, int32_t* s) {
  if (g.xt == dt::u8)
    window_sums(static_cast<const uint8_t*>(x), g, v.x_zp, s);
  else
    window_sums(static_cast<const int8_t*>(x), g, v.x_zp, s);
  const int64_t n = g.y[0], o = g.y[1], plane = g.y[2] * g.y[3], per_group = o / g.groups;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < n * o; ++r) {
    const auto wz = static_cast<uint32_t>(v.w_zp[static_cast<size_t>(r % o)]);
    const int32_t* srow = s + ((r / o) * g.groups + (r % o) / per_group) * plane;
    for (int64_t i = r * plane; i < (r + 1) * plane; ++i)
      acc[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) - wz * static_cast<uint32_t>(srow[i - r * plane]));
  }
}

/// The exact path (see the file's comment): x in pieces through the pieces plan, the partial
/// accumulators summed, the zero points subtracted, then the exact epilogue.
void run_exact(const sdk::OpCall& c, Exec& ex, const QConvCall& q, QValues& v, const PieceSplit& split) {
  OnednnBackend& be = ex.backend();
  const Geometry& g = q.g;
  const bool x_signed = g.xt == dt::s8, w_zp = !v.w_zp_zero;
  auto p = get_plan(be, g, pieces_variant(), {}, 1.f);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qconv2d: " + p->impl);
  const int64_t x_elems = g.x[0] * g.x[1] * g.x[2] * g.x[3];
  const Exec::Staged xs = ex.stage(q.x_user, sdk::data_ptr(c.in[0]), dnnl::memory::desc(g.x, g.xt, tag::nhwc));
  const Exec::Staged x_plain = w_zp ? ex.stage(q.x_user, sdk::data_ptr(c.in[0]), plain_md(g.x, g.xt)) : Exec::Staged{};
  const bool w_dense = sdk::is_contiguous(c.in[3]);
  const Exec::Staged ws = ex.stage(q.w_user, sdk::data_ptr(c.in[3]), w_dense ? q.w_user : p->pd.weights_desc());
  const Exec::Staged ys = ex.stage(q.y_user, sdk::data_ptr(c.out[0]), plain_md(g.y, to_dnnl(c.out[0].dtype)));
  const dnnl::memory::desc acc_md = p->pd.dst_desc(), acc_plain = plain_md(g.y, dt::s32);
  const size_t pieces = ex.reserve(static_cast<size_t>(x_elems * split.pieces));
  // The pieces are cut from dense NHWC (a blocked format's padding must stay zero) and reordered
  // into the kernel's format when it wants another.
  const dnnl::memory::desc pieces_md(g.x, dt::u8, tag::nhwc);
  const bool reorder_pieces = p->pd.src_desc() != pieces_md;
  const size_t piece_in = reorder_pieces ? ex.reserve(p->pd.src_desc().get_size()) : Exec::npos;
  const size_t acc = ex.reserve(acc_md.get_size()), acc_dense = ex.reserve(acc_plain.get_size());
  const size_t partial = split.pieces > 1 ? ex.reserve(acc_md.get_size()) : Exec::npos;
  const size_t sums = w_zp ? ex.reserve(plain_md({g.y[0], g.groups, g.y[2], g.y[3]}, dt::s32).get_size()) : Exec::npos;
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  auto* u = static_cast<uint8_t*>(ex.ptr(pieces));
  make_pieces(ex.staged_input(xs), x_signed, x_elems, split, u);
  bind_weights(ex, *p, q, c, ws);
  const auto acc_values = static_cast<int64_t>(acc_md.get_size() / sizeof(int32_t));
  for (int i = 0; i < split.pieces; ++i) {
    uint8_t* piece = u + i * x_elems;
    if (reorder_pieces) {
      ex.reorder(pieces_md, piece, p->pd.src_desc(), ex.ptr(piece_in));
      piece = static_cast<uint8_t*>(ex.ptr(piece_in));
    }
    ex.bind(*p, DNNL_ARG_SRC, p->pd.src_desc(), piece);
    ex.bind(*p, DNNL_ARG_DST, acc_md, ex.ptr(i == 0 ? acc : partial));
    ex.run(*p, c.op, scratch);
    if (i > 0)
      add_shifted(static_cast<int32_t*>(ex.ptr(acc)), static_cast<const int32_t*>(ex.ptr(partial)), acc_values,
                  split.bits * i);
  }
  ex.reorder(acc_md, ex.ptr(acc), acc_plain, ex.ptr(acc_dense));
  auto* a = static_cast<int32_t*>(ex.ptr(acc_dense));
  if (const int32_t z = shifted_zero_point(v.x_zp, x_signed); z != 0) subtract_weight_window_sums(a, c.in[3], g, z);
  if (w_zp) subtract_source_window_sums(a, ex.staged_input(x_plain), g, v, static_cast<int32_t*>(ex.ptr(sums)));
  be.note_impl(c.op, p->impl + " + ingot:exact_int8(" + std::to_string(split.pieces) + " pieces)");
  apply_epilogue(a, g.y[0], g.y[1], g.y[2] * g.y[3], Epilogue{q.ops.kind, c.out[0].dtype, q.relu}, v,
                 ex.staged_output(ys));
  ex.flush(ys);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  auto q = analyse(ex.backend(), c);
  if (!q) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qconv2d: unsupported call");
  QValues v = read_values(c, q->ops, q->g.y[1]);
  if (fused_is_exact(*q, v)) return run_fused(c, ex, *q, v);
  const std::optional<PieceSplit> split = piece_split(reduction(q->g), true);
  if (!split) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qconv2d: reduction too long for exact int8");
  run_exact(c, ex, *q, v, *split);
}

// The output keeps the kernel's layout (NHWC for int8) so that pooling and the next QCONV2D of
// ours read it as is.
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (index != 0) return false;
  auto q = analyse(be, c);
  if (!q) return false;
  auto p = probe_plan(be, *q);
  if (!p->prim) return false;
  const dnnl::memory::desc out = p->pd.dst_desc();
  if (out == plain_md(q->g.y, out.data_type())) return false;  // plain NCHW already: stay strided
  return set_opaque_output(be, outputs, 0, out);
}

}  // namespace

const OpFamily& qconv_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout};
  return f;
}

}  // namespace ingot::onednn
