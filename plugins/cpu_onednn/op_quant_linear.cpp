// QLINEAR as a oneDNN int8 matmul: x u8 | i8 [..., K] (leading dims flattened to M), the i8
// weight given as torch's [N, K] tensor and read as [K, N] through its strides, output f32 / i32 /
// u8 / i8. Scales and zero points are runtime arguments, so one plan serves every batch of dynamic
// quantization (whose x_scale changes per batch): output scales x_scale * w_scale[n] per column,
// runtime source and destination zero points. oneDNN 2.x adds a primitive's bias before the output
// scale; the op table adds it after, so the bias is a binary-add post-op (exact), then ReLU, and a
// requantized output multiplies by 1 / y_scale in a binary-mul post-op (its f32 zero-point add may
// round a near-tie the other way: within 1, as the op table allows between backends).
// That fused form is exact only with VNNI and a zero weight zero point. Every other call takes the
// exact path: x in pieces (int8_pieces.h, only where oneDNN's products saturate) through a plan
// without zero points, the partial products summed, then x_zp * sum_k w[n, k] and
// w_zp[n] * sum_k (x - x_zp) subtracted here, and the exact epilogue loop.
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

bool handles(int32_t op) { return op == INGOT_OP_QLINEAR; }

struct LinearCall {
  dnnl::memory::desc x_user, x_dense;  ///< x as it is and as [..., K] row-major
  dnnl::memory::desc a, b, y;          ///< the matmul's [M, K], [K, N], [M, N]
  dnnl::memory::desc y_user, y_dense;
  int64_t m = 0, k = 0, n = 0;
  bool stage_x = false;
  QOperands ops;
  bool has_bias = false, relu = false;
};

/// A [rows, cols] desc with strides (rs, cs); a size-1 dim gets the stride a dense one would have.
dnnl::memory::desc matrix_md(int64_t rows, int64_t cols, dt type, int64_t rs, int64_t cs) {
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cols * cs;
  return dnnl::memory::desc({rows, cols}, type, dims{rs, cs});
}

/// x's leading dims as one M dim with one stride, when its layout allows it.
std::optional<int64_t> row_stride(const ingot_tensor_desc& x) {
  int64_t stride = 0, span = 0;
  for (int i = x.ndim - 2; i >= 0; --i) {
    if (x.shape[i] == 1) continue;
    if (stride == 0)
      stride = x.strides[i];
    else if (x.strides[i] != span)
      return std::nullopt;
    span = x.strides[i] * x.shape[i];
  }
  return stride;
}

std::optional<LinearCall> analyse(const sdk::OpCall& c) {
  const auto& at = sdk::attr<ingot_attr_matmul>(c.attrs);
  if (c.n_in < 6 || c.n_out != 1) return std::nullopt;
  const ingot_tensor_desc &x = c.in[0], &w = c.in[3], &y = c.out[0];
  if (!is_q8(x.dtype) || w.dtype != INGOT_I8 || w.ndim != 2 || x.ndim < 1 || y.ndim != x.ndim) return std::nullopt;
  for (const ingot_tensor_desc* t : {&x, &w, &y}) {
    if (!is_plain_host(*t) || t->layout != INGOT_LAYOUT_STRIDED || !has_positive_strides(*t)) return std::nullopt;
  }
  LinearCall l;
  l.n = w.shape[0], l.k = w.shape[1];
  if (x.shape[x.ndim - 1] != l.k || y.shape[y.ndim - 1] != l.n) return std::nullopt;
  for (int i = 0; i < x.ndim - 1; ++i)
    if (x.shape[i] != y.shape[i]) return std::nullopt;
  l.m = sdk::numel(x) / l.k;
  auto ops = operands(c, at.has_bias != 0, at.activation, l.n);
  if (!ops) return std::nullopt;
  l.ops = *ops;
  l.has_bias = at.has_bias != 0;
  l.relu = at.activation == INGOT_ACT_RELU;
  const dt xt = to_dnnl(x.dtype), yt = to_dnnl(y.dtype);
  l.x_user = strided_md(x);
  l.x_dense = plain_md(dims_of(x), xt);
  const int64_t sk = x.ndim > 0 ? x.strides[x.ndim - 1] : 1;
  const std::optional<int64_t> sm = row_stride(x);
  l.stage_x = !sm;
  l.a = sm ? matrix_md(l.m, l.k, xt, *sm != 0 ? *sm : l.k * sk, sk) : plain_md({l.m, l.k}, xt);
  l.b = matrix_md(l.k, l.n, dt::s8, w.strides[1], w.strides[0]);
  l.y = plain_md({l.m, l.n}, yt);
  l.y_user = strided_md(y);
  l.y_dense = plain_md(dims_of(y), yt);
  return l;
}

/// The fused matmul, or (pieces) the exact path's: dense u8 [M, K] pieces times the weights, the
/// raw i32 product without zero points.
std::shared_ptr<Plan> get_plan(OnednnBackend& be, const LinearCall& l, bool x_zp, bool y_zp, bool pieces) {
  const dnnl::memory::desc y = pieces ? plain_md({l.m, l.n}, dt::s32) : l.y;
  const dnnl::memory::desc a = pieces ? plain_md({l.m, l.k}, dt::u8) : l.a;
  const QKind kind = pieces ? QKind::I32 : l.ops.kind;
  KeyBuilder key(INGOT_OP_QLINEAR);
  key.add_md(a).add_md(l.b).add_md(y).add(kind).add(l.has_bias).add(l.relu).add(x_zp).add(y_zp);
  key.add(be.threads());
  return be.plan(key.str(), [&] {
    dnnl::primitive_attr attr = OnednnBackend::user_scratchpad_attr();
    if (x_zp) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    if (kind != QKind::I32) {
      attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
      dnnl::post_ops po;
      if (l.has_bias) po.append_binary(dnnl::algorithm::binary_add, plain_md({1, l.n}, dt::f32));
      if (l.relu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      if (kind == QKind::Q8) po.append_binary(dnnl::algorithm::binary_mul, plain_md({1, 1}, dt::f32));
      attr.set_post_ops(po);
      if (kind == QKind::Q8 && y_zp) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    }
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, l.b, y), attr, be.engine());
    Plan p;
    p.prim = dnnl::matmul(pd);
    p.pd = pd;
    return p;
  });
}

/// The zero points: acc[m, n] -= z * sum_k w[n, k] + w_zp[n] * sum_k (x[m, k] - x_zp), where z is
/// the zero point of the pieces' source (shifted_zero_point), in wrapping i32 arithmetic as the
/// accumulator. x is read through the strides of `a`.
template <class T>
void subtract_zero_points(int32_t* acc, const T* x, const int8_t* w, const int64_t* w_strides, const LinearCall& l,
                          const dnnl::memory::desc& a, const QValues& v, int32_t z) {
  const int64_t sm = a.data.format_desc.blocking.strides[0], sk = a.data.format_desc.blocking.strides[1];
  std::vector<uint32_t> w_sums(static_cast<size_t>(l.n), 0);
  if (z != 0) {
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t k = 0; k < l.k; ++k)
        w_sums[static_cast<size_t>(n)] += static_cast<uint32_t>(w[n * w_strides[0] + k * w_strides[1]]);
  }
  const auto zu = static_cast<uint32_t>(z);
#pragma omp parallel for schedule(static)
  for (int64_t m = 0; m < l.m; ++m) {
    uint32_t sum = 0;
    if (!v.w_zp_zero) {
      for (int64_t k = 0; k < l.k; ++k) sum += static_cast<uint32_t>(static_cast<int32_t>(x[m * sm + k * sk]) - v.x_zp);
    }
    for (int64_t n = 0; n < l.n; ++n) {
      const auto wz = static_cast<uint32_t>(v.w_zp[static_cast<size_t>(n)]);
      const uint32_t off = zu * w_sums[static_cast<size_t>(n)] + wz * sum;
      acc[m * l.n + n] = static_cast<int32_t>(static_cast<uint32_t>(acc[m * l.n + n]) - off);
    }
  }
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto l = analyse(c);
  if (!l) return false;
  const bool q8 = l->ops.kind == QKind::Q8;
  std::vector<std::shared_ptr<Plan>> plans{get_plan(be, *l, false, false, true)};
  if (int8_products_exact()) {
    plans.push_back(get_plan(be, *l, false, false, false));
    plans.push_back(get_plan(be, *l, true, q8, false));
  }
  for (const auto& p : plans) {
    if (!p->prim || is_ref_impl(p->impl)) return false;
  }
  return true;
}

void run_fused(const sdk::OpCall& c, Exec& ex, const LinearCall& l, const QValues& v) {
  const bool x_zp = v.x_zp != 0, y_zp = v.y_zp != 0;
  auto p = get_plan(ex.backend(), l, x_zp, y_zp, false);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qlinear: " + p->impl);
  const Exec::Staged xs = ex.stage(l.x_user, sdk::data_ptr(c.in[0]), l.stage_x ? l.x_dense : l.x_user);
  const Exec::Staged ys = ex.stage(l.y_user, sdk::data_ptr(c.out[0]), l.y_dense);
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_SRC, l.a, ex.staged_input(xs));
  ex.bind(*p, DNNL_ARG_WEIGHTS, l.b, sdk::data_ptr(c.in[3]));
  ex.bind(*p, DNNL_ARG_DST, ex.staged_output(ys));
  if (x_zp)
    ex.bind(*p, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, plain_md({1}, dt::s32), const_cast<int32_t*>(&v.x_zp));
  if (l.ops.kind != QKind::I32) {
    ex.bind(*p, DNNL_ARG_ATTR_OUTPUT_SCALES, plain_md({l.n}, dt::f32), const_cast<float*>(v.scale.data()));
    int post_op = 0;
    if (l.has_bias)
      ex.bind(*p, DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op++) | DNNL_ARG_SRC_1, plain_md({1, l.n}, dt::f32),
              const_cast<float*>(v.bias.data()));
    if (l.relu) ++post_op;
    if (l.ops.kind == QKind::Q8) {
      ex.bind(*p, DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op) | DNNL_ARG_SRC_1, plain_md({1, 1}, dt::f32),
              const_cast<float*>(&v.inv_y_scale));
      if (y_zp)
        ex.bind(*p, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, plain_md({1}, dt::s32), const_cast<int32_t*>(&v.y_zp));
    }
  }
  ex.run(*p, c.op, scratch);
  ex.flush(ys);
}

/// The exact path (see the file's comment).
void run_exact(const sdk::OpCall& c, Exec& ex, const LinearCall& l, const QValues& v) {
  const PieceSplit split = *piece_split(l.k, false);
  const bool x_signed = c.in[0].dtype == INGOT_I8;
  auto p = get_plan(ex.backend(), l, false, false, true);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qlinear: " + p->impl);
  const Exec::Staged xs = ex.stage(l.x_user, sdk::data_ptr(c.in[0]), l.x_dense);
  const Exec::Staged ys = ex.stage(l.y_user, sdk::data_ptr(c.out[0]), l.y_dense);
  const auto mk = static_cast<size_t>(l.m * l.k), mn = static_cast<size_t>(l.m * l.n);
  const size_t pieces = ex.reserve(mk * static_cast<size_t>(split.pieces));
  const size_t acc = ex.reserve(mn * sizeof(int32_t));
  const size_t partial = split.pieces > 1 ? ex.reserve(mn * sizeof(int32_t)) : Exec::npos;
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  const void* x = ex.staged_input(xs);
  auto* u = static_cast<uint8_t*>(ex.ptr(pieces));
  make_pieces(x, x_signed, l.m * l.k, split, u);
  ex.bind(*p, DNNL_ARG_WEIGHTS, l.b, sdk::data_ptr(c.in[3]));
  auto* a = static_cast<int32_t*>(ex.ptr(acc));
  for (int i = 0; i < split.pieces; ++i) {
    ex.bind(*p, DNNL_ARG_SRC, plain_md({l.m, l.k}, dt::u8), u + static_cast<size_t>(i) * mk);
    ex.bind(*p, DNNL_ARG_DST, ex.ptr(i == 0 ? acc : partial));
    ex.run(*p, c.op, scratch);
    if (i > 0) add_shifted(a, static_cast<const int32_t*>(ex.ptr(partial)), static_cast<int64_t>(mn), split.bits * i);
  }
  const dnnl::memory::desc x_rows = plain_md({l.m, l.k}, to_dnnl(c.in[0].dtype));
  const int32_t z = shifted_zero_point(v.x_zp, x_signed);
  const auto* w = sdk::data_ptr<const int8_t>(c.in[3]);
  if (x_signed)
    subtract_zero_points(a, static_cast<const int8_t*>(x), w, c.in[3].strides, l, x_rows, v, z);
  else
    subtract_zero_points(a, static_cast<const uint8_t*>(x), w, c.in[3].strides, l, x_rows, v, z);
  ex.backend().note_impl(c.op, p->impl + " + ingot:exact_int8(" + std::to_string(split.pieces) + " pieces)");
  apply_epilogue(a, l.m, l.n, 1, Epilogue{l.ops.kind, c.out[0].dtype, l.relu}, v, ex.staged_output(ys));
  ex.flush(ys);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  auto l = analyse(c);
  if (!l) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn qlinear: unsupported call");
  const QValues v = read_values(c, l->ops, l->n);
  if (int8_products_exact() && v.w_zp_zero) return run_fused(c, ex, *l, v);
  run_exact(c, ex, *l, v);
}

}  // namespace

const OpFamily& qlinear_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
