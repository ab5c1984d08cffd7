// Convolution family: conv2d forward (bias, relu / gelu post-op), backward-data and
// backward-weights in f32 and bf16 (f32 accumulation, one rounding to a bf16 output; the bias is
// the data's dtype). Primitives are created with format_tag::any (oneDNN picks its fast
// blocked formats); tensors in another layout are reordered through workspace buffers, and the
// forward output may stay blocked (an opaque layout) for the next op of ours. An f32 call whose
// attributes allow Winograd (ABI 2.5) runs oneDNN's Winograd kernels where it has them (3x3,
// stride 1, AVX-512), else the direct ones.
#include <optional>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) {
  return op == INGOT_OP_CONV2D || op == INGOT_OP_CONV2D_BWD_DATA || op == INGOT_OP_CONV2D_BWD_WEIGHT;
}

struct ConvGeometry {
  dims x, w, y, bias;  // w is [g, O/g, C/g, kh, kw] when grouped
  dims strides, dilates, pad_l, pad_r;
  int64_t groups = 1;
  bool has_bias = false;
  int32_t activation = INGOT_ACT_NONE;
  dt type = dt::f32;
  bool winograd = false;  ///< the call allows it (f32, ungrouped): tried first
};

/// x, w, y descriptors of the call: (in0, in1, out) for forward, (out, in1, in0) for backward
/// data, (in0, out, in1) for backward weights.
void roles(const sdk::OpCall& c, const ingot_tensor_desc*& x, const ingot_tensor_desc*& w,
           const ingot_tensor_desc*& y) {
  if (c.op == INGOT_OP_CONV2D)
    x = &c.in[0], w = &c.in[1], y = &c.out[0];
  else if (c.op == INGOT_OP_CONV2D_BWD_DATA)
    x = &c.out[0], w = &c.in[1], y = &c.in[0];
  else
    x = &c.in[0], w = &c.out[0], y = &c.in[1];
}

std::optional<ConvGeometry> geometry(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_conv2d>(c.attrs);
  const bool fwd = c.op == INGOT_OP_CONV2D;
  if (c.n_out != 1 || c.n_in != (fwd && a.has_bias ? 3 : 2)) return std::nullopt;
  const ingot_tensor_desc *x, *w, *y;
  roles(c, x, w, y);
  if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4 || w->layout != INGOT_LAYOUT_STRIDED) return std::nullopt;
  for (const ingot_tensor_desc* t : {x, w, y}) {
    if (t->dtype != x->dtype || !is_compute_dtype(t->dtype) || !is_plain_host(*t)) return std::nullopt;
    if (t->layout == INGOT_LAYOUT_STRIDED && !has_positive_strides(*t)) return std::nullopt;
  }
  if (a.groups < 1 || x->shape[1] % a.groups != 0 || w->shape[0] % a.groups != 0) return std::nullopt;
  if (!fusable_activation(a.activation)) return std::nullopt;
  ConvGeometry g;
  g.groups = a.groups;
  g.type = to_dnnl(x->dtype);
  // bf16 weight gradients with one input channel per group (a first conv on grey images): oneDNN
  // 2.6's bf16 kernels run them at half the f32 speed, so the plan is f32 and the staging reorders
  // widen the inputs (exactly) and round the gradient once, which is what f32 accumulation gives.
  if (c.op == INGOT_OP_CONV2D_BWD_WEIGHT && g.type == dt::bf16 && x->shape[1] / a.groups == 1) g.type = dt::f32;
  g.x = dims_of(*x);
  g.y = dims_of(*y);
  g.w = dims_of(*w);
  if (g.groups > 1) g.w = {g.groups, g.w[0] / g.groups, g.w[1], g.w[2], g.w[3]};
  g.strides = {a.stride[0], a.stride[1]};
  g.dilates = {a.dilation[0] - 1, a.dilation[1] - 1};  // oneDNN counts the gap, torch the step
  g.pad_l = {a.padding[0], a.padding[1]};
  g.pad_r = g.pad_l;  // both floor the output size, so torch's symmetric padding maps directly
  g.winograd = ingot_conv_algorithm_of(&a) == INGOT_CONV_ALGO_WINOGRAD && g.groups == 1 && g.type == dt::f32;
  if (fwd) {
    g.has_bias = a.has_bias != 0;
    g.activation = a.activation;
    if (g.has_bias) {
      if (sdk::numel(c.in[2]) != g.y[1] || !sdk::is_contiguous(c.in[2]) || c.in[2].dtype != x->dtype)
        return std::nullopt;
      g.bias = {g.y[1]};
    }
  }
  return g;
}

dnnl::memory::desc any_md(const dims& d, dt type) { return dnnl::memory::desc(d, type, tag::any); }

dnnl::convolution_forward::primitive_desc forward_pd(OnednnBackend& be, const ConvGeometry& g, dnnl::algorithm alg,
                                                     bool with_post_ops) {
  auto bias = g.has_bias ? dnnl::memory::desc(g.bias, g.type, tag::x) : dnnl::memory::desc();
  auto d = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg,
                                           any_md(g.x, g.type), any_md(g.w, g.type), bias, any_md(g.y, g.type),
                                           g.strides, g.dilates, g.pad_l, g.pad_r);
  dnnl::primitive_attr attr = OnednnBackend::user_scratchpad_attr();
  if (with_post_ops && g.activation != INGOT_ACT_NONE) {
    dnnl::post_ops po;
    append_activation(po, g.activation);
    attr.set_post_ops(po);
  }
  return dnnl::convolution_forward::primitive_desc(d, attr, be.engine());
}

/// The primitive of the call with algorithm `alg` (throws dnnl::error where oneDNN has none).
Plan build_plan(OnednnBackend& be, const sdk::OpCall& c, const ConvGeometry& g, dnnl::algorithm alg) {
  Plan p;
  if (c.op == INGOT_OP_CONV2D) {
    auto pd = forward_pd(be, g, alg, true);
    p.prim = dnnl::convolution_forward(pd);
    p.pd = pd;
  } else if (c.op == INGOT_OP_CONV2D_BWD_DATA) {
    auto hint = forward_pd(be, g, alg, false);
    auto d = dnnl::convolution_backward_data::desc(alg, any_md(g.x, g.type), any_md(g.w, g.type), any_md(g.y, g.type),
                                                   g.strides, g.dilates, g.pad_l, g.pad_r);
    auto pd =
        dnnl::convolution_backward_data::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine(), hint);
    p.prim = dnnl::convolution_backward_data(pd);
    p.pd = pd;
    p.aux_pd = hint;
  } else {
    auto hint = forward_pd(be, g, alg, false);
    auto d = dnnl::convolution_backward_weights::desc(alg, any_md(g.x, g.type), any_md(g.w, g.type),
                                                      any_md(g.y, g.type), g.strides, g.dilates, g.pad_l, g.pad_r);
    auto pd = dnnl::convolution_backward_weights::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine(),
                                                                 hint);
    p.prim = dnnl::convolution_backward_weights(pd);
    p.pd = pd;
    p.aux_pd = hint;
  }
  return p;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const ConvGeometry& g) {
  // formats are `any`, so the plan depends on sizes and attributes only, not on layouts
  KeyBuilder key(c.op);
  for (const dims* d : {&g.x, &g.w, &g.y, &g.strides, &g.dilates, &g.pad_l}) {
    key.add(d->size()).add_bytes(d->data(), d->size() * sizeof(int64_t));
  }
  key.add(g.type).add(g.has_bias).add(g.activation).add(g.winograd).add(be.threads());
  return be.plan(key.str(), [&] {
    if (g.winograd) {
      try {
        Plan p = build_plan(be, c, g, dnnl::algorithm::convolution_winograd);
        if (!is_ref_impl(p.pd.impl_info_str())) return p;
      } catch (const dnnl::error&) {  // no Winograd kernel for this call here: the direct one
      }
    }
    return build_plan(be, c, g, dnnl::algorithm::convolution_direct);
  });
}

/// The desc a tensor has in memory; OIHW weights are viewed as [g, O/g, C/g, kh, kw].
dnnl::memory::desc user_md(OnednnBackend& be, const ingot_tensor_desc& t, const dims& want) {
  if (const dnnl::memory::desc* md = be.opaque_md(t)) return *md;
  if (static_cast<int>(want.size()) == t.ndim) return strided_md(t);
  const int64_t* s = t.strides;
  return dnnl::memory::desc(want, to_dnnl(t.dtype), dims{s[0] * want[1], s[0], s[1], s[2], s[3]});
}

struct Binding {
  int arg;
  const ingot_tensor_desc* t;
  dims want;
  bool output;
};

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto g = geometry(c);
  if (!g) return false;
  auto p = get_plan(be, c, *g);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  auto g = geometry(c);
  if (!g) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn conv2d: unsupported call");
  auto p = get_plan(be, c, *g);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn conv2d: " + p->impl);
  std::vector<Binding> b;
  if (c.op == INGOT_OP_CONV2D) {
    b = {{DNNL_ARG_SRC, &c.in[0], g->x, false},
         {DNNL_ARG_WEIGHTS, &c.in[1], g->w, false},
         {DNNL_ARG_DST, &c.out[0], g->y, true}};
  } else if (c.op == INGOT_OP_CONV2D_BWD_DATA) {
    b = {{DNNL_ARG_DIFF_DST, &c.in[0], g->y, false},
         {DNNL_ARG_WEIGHTS, &c.in[1], g->w, false},
         {DNNL_ARG_DIFF_SRC, &c.out[0], g->x, true}};
  } else {
    b = {{DNNL_ARG_SRC, &c.in[0], g->x, false},
         {DNNL_ARG_DIFF_DST, &c.in[1], g->y, false},
         {DNNL_ARG_DIFF_WEIGHTS, &c.out[0], g->w, true}};
  }
  // tensors whose layout differs from the primitive's go through a workspace buffer
  std::vector<Exec::Staged> staged;
  for (const Binding& bi : b)
    staged.push_back(
        ex.stage(user_md(be, *bi.t, bi.want), sdk::data_ptr(*bi.t), p->pd.query_md(dnnl::query::exec_arg_md, bi.arg)));
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  for (size_t i = 0; i < b.size(); ++i)
    ex.bind(*p, b[i].arg, staged[i].want, b[i].output ? ex.staged_output(staged[i]) : ex.staged_input(staged[i]));
  if (g->has_bias) ex.bind(*p, DNNL_ARG_BIAS, p->pd.weights_desc(1), sdk::data_ptr(c.in[2]));
  ex.run(*p, c.op, scratch);
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i].output) ex.flush(staged[i]);
}

// The forward's output and the backward-data's input gradient keep the primitive's (blocked)
// layout, so the activations of a conv net and their gradients stay blocked between ops.
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if ((c.op != INGOT_OP_CONV2D && c.op != INGOT_OP_CONV2D_BWD_DATA) || index != 0) return false;
  auto g = geometry(c);
  if (!g) return false;
  auto p = get_plan(be, c, *g);
  if (!p->prim) return false;
  const bool fwd = c.op == INGOT_OP_CONV2D;
  dnnl::memory::desc out = fwd ? p->pd.dst_desc() : p->pd.diff_src_desc();
  if (out == plain_md(fwd ? g->y : g->x, g->type)) return false;  // plain NCHW already: stay strided
  return set_opaque_output(be, outputs, 0, out);
}

}  // namespace

const OpFamily& conv_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout};
  return f;
}

}  // namespace ingot::onednn
