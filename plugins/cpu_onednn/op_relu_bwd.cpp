// RELU_BWD, GELU_BWD, GELU_TANH_BWD: the activations' gradients as oneDNN's eltwise backward
// (relu, gelu_erf, gelu_tanh, from the input), in the layout its inputs share — blocked activations of a conv net stay blocked through the backward.
#include <optional>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) {
  return op == INGOT_OP_RELU_BWD || op == INGOT_OP_GELU_BWD || op == INGOT_OP_GELU_TANH_BWD;
}

dnnl::algorithm algorithm_of(int32_t op) {
  return op == INGOT_OP_GELU_BWD        ? dnnl::algorithm::eltwise_gelu_erf
         : op == INGOT_OP_GELU_TANH_BWD ? dnnl::algorithm::eltwise_gelu_tanh
                                        : dnnl::algorithm::eltwise_relu;
}

// How a call runs: in the blocked desc of its blocked input(s), or as one flat vector for dense
// ones. A dense input next to a blocked one is reordered into that blocked layout in the
// workspace first, so the gradient stays blocked for the next op.
struct Layout {
  dnnl::memory::desc md;
  bool flat = false;  ///< all dense: every tensor is read as the flat vector md
};

bool dense(const ingot_tensor_desc& d) { return sdk::is_contiguous(d) && sdk::numel(d) > 0; }

std::optional<Layout> layout_of(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 2 || c.n_out != 1) return std::nullopt;
  const ingot_tensor_desc &g = c.in[0], &x = c.in[1], &y = c.out[0];
  if (!is_compute_dtype(g.dtype) || x.dtype != g.dtype || y.dtype != g.dtype) return std::nullopt;
  if (!is_plain_host(g) || !is_plain_host(x) || !is_plain_host(y)) return std::nullopt;
  const dnnl::memory::desc *gmd = be.opaque_md(g), *xmd = be.opaque_md(x), *ymd = be.opaque_md(y);
  if (gmd == nullptr && xmd == nullptr) {
    if (ymd != nullptr || !dense(g) || !dense(x) || !dense(y)) return std::nullopt;
    return Layout{dnnl::memory::desc({sdk::numel(y)}, to_dnnl(y.dtype), tag::a), true};
  }
  const dnnl::memory::desc& md = gmd != nullptr ? *gmd : *xmd;
  if (gmd != nullptr && xmd != nullptr && *gmd != *xmd) return std::nullopt;
  if ((gmd == nullptr && !dense(g)) || (xmd == nullptr && !dense(x))) return std::nullopt;
  if (ymd != nullptr ? *ymd != md : !dense(y)) return std::nullopt;  // a dense y gets the result reordered
  return Layout{md};
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, int32_t op, const dnnl::memory::desc& md) {
  KeyBuilder key(op);
  key.add_md(md).add(be.threads());
  return be.plan(key.str(), [&] {
    const dnnl::algorithm a = algorithm_of(op);
    auto fwd_d = dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, a, md, 0.f, 0.f);
    auto fwd_pd = dnnl::eltwise_forward::primitive_desc(fwd_d, be.engine());
    auto d = dnnl::eltwise_backward::desc(a, md, md, 0.f, 0.f);
    auto pd = dnnl::eltwise_backward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine(), fwd_pd);
    Plan p;
    p.prim = dnnl::eltwise_backward(pd);
    p.pd = pd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto l = layout_of(be, c);
  if (!l) return false;
  auto p = get_plan(be, c.op, l->md);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  auto l = layout_of(be, c);
  if (!l) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn relu_bwd: unsupported call");
  auto p = get_plan(be, c.op, l->md);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn relu_bwd: " + p->impl);
  ex.serial_if_small(sdk::numel(c.out[0]));
  const size_t scratch = ex.reserve_scratchpad(*p);
  // dense tensors next to a blocked one go through workspace buffers in the blocked layout
  const auto stage = [&](const ingot_tensor_desc& t) {
    return ex.stage(l->flat ? l->md : *be.md_of(t), sdk::data_ptr(t), l->md);
  };
  const Exec::Staged g = stage(c.in[0]), x = stage(c.in[1]), y = stage(c.out[0]);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_DIFF_DST, ex.staged_input(g));
  ex.bind(*p, DNNL_ARG_SRC, ex.staged_input(x));
  ex.bind(*p, DNNL_ARG_DIFF_SRC, ex.staged_output(y));
  ex.run(*p, c.op, scratch);
  ex.flush(y);
}

// A blocked input: the gradient is blocked alike.
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (index != 0 || c.n_in != 2 || outputs[0].dtype != c.in[0].dtype) return false;
  const dnnl::memory::desc *gmd = be.opaque_md(c.in[0]), *xmd = be.opaque_md(c.in[1]);
  if (gmd != nullptr && xmd != nullptr && *gmd != *xmd) return false;
  const dnnl::memory::desc* md = gmd != nullptr ? gmd : xmd;
  const int other = gmd != nullptr ? 1 : 0;
  if (md == nullptr || (be.opaque_md(c.in[other]) == nullptr && !dense(c.in[other]))) return false;
  return set_opaque_output(be, outputs, 0, *md);
}

// oneDNN's eltwise backward runs with diff_dst and diff_src in one buffer (it reads src, kept).
bool in_place(OnednnBackend& be, const sdk::OpCall& c, int out, int in) {
  (void)be, (void)c;
  return out == 0 && in == 0;
}

}  // namespace

const OpFamily& relu_bwd_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout, nullptr, &in_place};
  return f;
}

}  // namespace ingot::onednn
