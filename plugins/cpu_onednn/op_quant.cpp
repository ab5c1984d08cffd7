// Quantize / dequantize family: QUANTIZE (f32 -> u8 | i8) and DEQUANTIZE (u8 | i8 | i32 -> f32),
// per tensor or per channel, as oneDNN reorders with runtime scales (one plan serves every
// scale). Exactness decides the path: the reorder multiplies by 1.0f / scale and rounds to
// nearest even as the op table asks, but adds a zero point in f32 before rounding (off by one
// near ties) and subtracts one from an i32 after converting it to f32. So a quantize with a
// zero point or a narrower range reorders to i32 and adds the zero point and clamps in integers,
// and a dequantize oneDNN cannot do exactly (per-channel zero points, i32 with a zero point) runs
// a plain loop. Both read any of our layouts, and keep it for their output.
#include <optional>

#include "desc_util.h"
#include "op_families.h"
#include "op_quant_common.h"

namespace ingot::onednn {
namespace {

using namespace quant;

bool handles(int32_t op) { return op == INGOT_OP_QUANTIZE || op == INGOT_OP_DEQUANTIZE; }

struct QuantCall {
  dnnl::memory::desc src, dst;  ///< x and q (QUANTIZE), q and y (DEQUANTIZE), in their own layouts
  dims shape;
  int axis = 0;
  int64_t channels = 1;  ///< 1 = per tensor
  int32_t qmin = 0, qmax = 0;
};

std::optional<QuantCall> analyse(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 3 || c.n_out != 1) return std::nullopt;
  const auto& a = sdk::attr<ingot_attr_quantize>(c.attrs);
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  const bool quantize = c.op == INGOT_OP_QUANTIZE;
  if (quantize ? (x.dtype != INGOT_F32 || !is_q8(y.dtype))
               : (y.dtype != INGOT_F32 || (!is_q8(x.dtype) && x.dtype != INGOT_I32)))
    return std::nullopt;
  if (!is_plain_host(x) || !is_plain_host(y) || x.ndim != y.ndim) return std::nullopt;
  for (int i = 0; i < x.ndim; ++i)
    if (x.shape[i] != y.shape[i]) return std::nullopt;
  for (const ingot_tensor_desc* t : {&x, &y}) {
    if (t->layout == INGOT_LAYOUT_STRIDED ? !has_positive_strides(*t) : be.opaque_md(*t) == nullptr)
      return std::nullopt;
  }
  QuantCall q;
  q.src = *be.md_of(x);
  q.dst = *be.md_of(y);
  q.shape = dims_of(x);
  q.channels = sdk::numel(c.in[1]);
  if (sdk::numel(c.in[2]) != q.channels) return std::nullopt;  // as many zero points as scales
  if (q.channels > 1) {
    q.axis = a.axis < 0 ? a.axis + x.ndim : a.axis;
    if (q.axis < 0 || q.axis >= x.ndim || x.shape[q.axis] != q.channels) return std::nullopt;
  }
  if (!param_ok(c.in[1], INGOT_F32, q.channels) || !param_ok(c.in[2], INGOT_I32, q.channels)) return std::nullopt;
  const int32_t qd = quantize ? y.dtype : x.dtype;
  q.qmin = quantize ? a.quant_min : q_min(qd);
  q.qmax = quantize ? a.quant_max : q_max(qd);
  if (quantize && (q.qmin < q_min(qd) || q.qmax > q_max(qd) || q.qmin > q.qmax)) return std::nullopt;
  return q;
}

int scale_mask(const QuantCall& q) { return q.channels > 1 ? 1 << q.axis : 0; }

/// A reorder src -> dst with runtime output scales (and a runtime common source zero point).
std::shared_ptr<Plan> reorder_plan(OnednnBackend& be, int32_t op, const dnnl::memory::desc& src,
                                   const dnnl::memory::desc& dst, int mask, bool src_zp) {
  KeyBuilder key(op);
  key.add_md(src).add_md(dst).add(mask).add(src_zp).add(be.threads());
  return be.plan(key.str(), [&] {
    dnnl::primitive_attr attr;
    attr.set_output_scales(mask, {DNNL_RUNTIME_F32_VAL});
    if (src_zp) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    auto pd = dnnl::reorder::primitive_desc(be.engine(), src, be.engine(), dst, attr);
    Plan p;
    p.prim = dnnl::reorder(pd);
    p.pd = pd;
    return p;
  });
}

dnnl::memory::desc vec_md(size_t n, dt type) { return dnnl::memory::desc({static_cast<int64_t>(n)}, type, tag::x); }

void run_reorder(Exec& ex, Plan& p, int32_t op, void* src, void* dst, std::vector<float>& scales, int32_t* zp) {
  ex.bind(p, DNNL_ARG_FROM, src);
  ex.bind(p, DNNL_ARG_TO, dst);
  ex.bind(p, DNNL_ARG_ATTR_OUTPUT_SCALES, vec_md(scales.size(), dt::f32), scales.data());
  if (zp != nullptr) ex.bind(p, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, vec_md(1, dt::s32), zp);
  ex.run(p, op);
}

template <class T>
void add_zero_point(const int32_t* acc, T* q, const QuantCall& qc, const std::vector<int32_t>& zp) {
  for_each_channel_run(qc.shape, qc.axis, qc.channels, [&](int64_t begin, int64_t end, int64_t c) {
    const int64_t z = zp[zp.size() == 1 ? 0 : static_cast<size_t>(c)];
    for (int64_t i = begin; i < end; ++i) q[i] = static_cast<T>(std::clamp<int64_t>(acc[i] + z, qc.qmin, qc.qmax));
  });
}

template <class T>
void dequantize_loop(const T* q, float* y, const QuantCall& qc, const std::vector<float>& s,
                     const std::vector<int32_t>& zp) {
  for_each_channel_run(qc.shape, qc.axis, qc.channels, [&](int64_t begin, int64_t end, int64_t c) {
    const float sc = s[s.size() == 1 ? 0 : static_cast<size_t>(c)];
    const int32_t z = zp[zp.size() == 1 ? 0 : static_cast<size_t>(c)];
    for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(static_cast<int32_t>(q[i]) - z) * sc;
  });
}

void execute_quantize(const sdk::OpCall& c, Exec& ex, const QuantCall& q) {
  OnednnBackend& be = ex.backend();
  std::vector<float> inv = read_f32(c.in[1]);
  for (float& s : inv) s = 1.0f / s;
  if (q.channels > 1 && inv.size() == 1) inv.assign(static_cast<size_t>(q.channels), inv[0]);
  const std::vector<int32_t> zp = read_i32(c.in[2]);
  const int32_t qd = c.out[0].dtype;
  if (all_zero(zp) && q.qmin == q_min(qd) && q.qmax == q_max(qd)) {  // one reorder, rounding and saturating
    auto p = reorder_plan(be, c.op, q.src, q.dst, scale_mask(q), false);
    if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn quantize: " + p->impl);
    ex.allocate();
    return run_reorder(ex, *p, c.op, sdk::data_ptr(c.in[0]), sdk::data_ptr(c.out[0]), inv, nullptr);
  }
  const dnnl::memory::desc acc_md = plain_md(q.shape, dt::s32), q_md = plain_md(q.shape, to_dnnl(qd));
  auto p = reorder_plan(be, c.op, q.src, acc_md, scale_mask(q), false);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn quantize: " + p->impl);
  const size_t acc = ex.reserve(acc_md.get_size());
  const Exec::Staged out = ex.stage(q.dst, sdk::data_ptr(c.out[0]), q_md);
  ex.allocate();
  run_reorder(ex, *p, c.op, sdk::data_ptr(c.in[0]), ex.ptr(acc), inv, nullptr);
  const auto* a = static_cast<const int32_t*>(ex.ptr(acc));
  if (qd == INGOT_U8)
    add_zero_point(a, static_cast<uint8_t*>(ex.staged_output(out)), q, zp);
  else
    add_zero_point(a, static_cast<int8_t*>(ex.staged_output(out)), q, zp);
  ex.flush(out);
}

void execute_dequantize(const sdk::OpCall& c, Exec& ex, const QuantCall& q) {
  OnednnBackend& be = ex.backend();
  std::vector<float> scale = read_f32(c.in[1]);
  std::vector<int32_t> zp = read_i32(c.in[2]);
  const bool common_zp = std::all_of(zp.begin(), zp.end(), [&](int32_t z) { return z == zp[0]; });
  const int32_t qd = c.in[0].dtype;
  if (common_zp && (zp[0] == 0 || qd != INGOT_I32)) {  // exact: small integers are exact in f32
    if (q.channels > 1 && scale.size() == 1) scale.assign(static_cast<size_t>(q.channels), scale[0]);
    auto p = reorder_plan(be, c.op, q.src, q.dst, scale_mask(q), zp[0] != 0);
    if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn dequantize: " + p->impl);
    ex.allocate();
    return run_reorder(ex, *p, c.op, sdk::data_ptr(c.in[0]), sdk::data_ptr(c.out[0]), scale,
                       zp[0] != 0 ? zp.data() : nullptr);
  }
  be.note_impl(c.op, "ingot:omp_dequantize");
  const Exec::Staged in = ex.stage(q.src, sdk::data_ptr(c.in[0]), plain_md(q.shape, to_dnnl(qd)));
  const Exec::Staged out = ex.stage(q.dst, sdk::data_ptr(c.out[0]), plain_md(q.shape, dt::f32));
  ex.allocate();
  const void* src = ex.staged_input(in);
  auto* y = static_cast<float*>(ex.staged_output(out));
  if (qd == INGOT_U8)
    dequantize_loop(static_cast<const uint8_t*>(src), y, q, scale, zp);
  else if (qd == INGOT_I8)
    dequantize_loop(static_cast<const int8_t*>(src), y, q, scale, zp);
  else
    dequantize_loop(static_cast<const int32_t*>(src), y, q, scale, zp);
  ex.flush(out);
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto q = analyse(be, c);
  if (!q) return false;
  // the reorders every path may use (plans are cached, so execute finds them again)
  const bool quantize = c.op == INGOT_OP_QUANTIZE;
  std::vector<std::shared_ptr<Plan>> plans = {reorder_plan(be, c.op, q->src, q->dst, scale_mask(*q), false)};
  if (quantize) plans.push_back(reorder_plan(be, c.op, q->src, plain_md(q->shape, dt::s32), scale_mask(*q), false));
  if (!quantize && c.in[0].dtype != INGOT_I32)
    plans.push_back(reorder_plan(be, c.op, q->src, q->dst, scale_mask(*q), true));
  for (const auto& p : plans)
    if (!p->prim || is_ref_impl(p->impl)) return false;
  return true;
}

void execute(const sdk::OpCall& c, Exec& ex) {
  auto q = analyse(ex.backend(), c);
  if (!q) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn quantize: unsupported call");
  ex.serial_if_small(sdk::numel(c.in[0]));
  if (c.op == INGOT_OP_QUANTIZE) return execute_quantize(c, ex, *q);
  execute_dequantize(c, ex, *q);
}

/// `md` with another data type (strides count elements, so the layout stays the same).
std::optional<dnnl::memory::desc> retyped(const dnnl::memory::desc& md, dt type) {
  if (md.data.format_kind != dnnl_blocked || md.data.extra.flags != 0) return std::nullopt;
  dnnl_memory_desc_t d = md.data;
  d.data_type = static_cast<dnnl_data_type_t>(type);
  return dnnl::memory::desc(d);
}

// An input in one of our layouts (a convolution's output) keeps one for the output, so that the
// next op of ours reads it as is: a dequantized tensor the same layout, a quantized activation
// NHWC (where oneDNN's int8 pooling and convolutions work).
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  const dnnl::memory::desc* in = be.opaque_md(c.in[0]);
  if (index != 0 || in == nullptr || !analyse(be, c)) return false;
  const dt type = to_dnnl(c.out[0].dtype);
  auto out = c.op == INGOT_OP_QUANTIZE && c.out[0].ndim == 4
                 ? std::optional<dnnl::memory::desc>(dnnl::memory::desc(dims_of(c.out[0]), type, tag::acdb))
                 : retyped(*in, type);
  if (!out) return false;
  auto p = reorder_plan(be, c.op, *in, *out, 0, false);
  if (!p->prim || is_ref_impl(p->impl)) return false;
  return set_opaque_output(be, outputs, 0, *out);
}

}  // namespace

const OpFamily& quant_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout};
  return f;
}

}  // namespace ingot::onednn
