// Eltwise family: unary ops oneDNN computes with torch semantics (relu, gelu erf, tanh, sigmoid,
// exp, log, sqrt, abs, neg, round-half-even, clamp, softplus with beta 1). Dense tensors run
// as one flat vector; a blocked input of ours runs in its blocked layout.
#include <limits>
#include <optional>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

using alg = dnnl::algorithm;

struct EltwiseSpec {
  alg algorithm;
  float alpha = 0.f;
  float beta = 0.f;
};

std::optional<EltwiseSpec> spec_of(const sdk::OpCall& c) {
  switch (c.op) {
    case INGOT_OP_RELU:
      return EltwiseSpec{alg::eltwise_relu};
    case INGOT_OP_GELU:
      return EltwiseSpec{alg::eltwise_gelu_erf};
    case INGOT_OP_GELU_TANH:
      return EltwiseSpec{alg::eltwise_gelu_tanh};
    case INGOT_OP_TANH:
      return EltwiseSpec{alg::eltwise_tanh};
    case INGOT_OP_SIGMOID:
      return EltwiseSpec{alg::eltwise_logistic};
    case INGOT_OP_EXP:
      return EltwiseSpec{alg::eltwise_exp};
    case INGOT_OP_LOG:
      return EltwiseSpec{alg::eltwise_log};
    case INGOT_OP_SQRT:
      return EltwiseSpec{alg::eltwise_sqrt};
    case INGOT_OP_ABS:
      return EltwiseSpec{alg::eltwise_abs};
    case INGOT_OP_NEG:
      return EltwiseSpec{alg::eltwise_linear, -1.f, 0.f};
    case INGOT_OP_ROUND:
      return EltwiseSpec{alg::eltwise_round};
    case INGOT_OP_CLAMP: {
      const auto& a = sdk::attr<ingot_attr_clamp>(c.attrs);
      const float inf = std::numeric_limits<float>::infinity();
      return EltwiseSpec{alg::eltwise_clip, a.has_min ? static_cast<float>(a.min) : -inf,
                         a.has_max ? static_cast<float>(a.max) : inf};
    }
    case INGOT_OP_SOFTPLUS: {
      // oneDNN's soft_relu is log(1 + exp(x)): torch's beta = 1; its threshold only switches to
      // the identity where log1p(exp(x)) already rounds to x in f32 (x > ~17), so accept >= 20.
      const auto& a = sdk::attr<ingot_attr_softplus>(c.attrs);
      if (a.beta != 1.0 || a.threshold < 20.0) return std::nullopt;
      return EltwiseSpec{alg::eltwise_soft_relu};
    }
    default:
      return std::nullopt;
  }
}

bool handles(int32_t op) {
  switch (op) {
    case INGOT_OP_RELU:
    case INGOT_OP_GELU:
    case INGOT_OP_GELU_TANH:
    case INGOT_OP_TANH:
    case INGOT_OP_SIGMOID:
    case INGOT_OP_EXP:
    case INGOT_OP_LOG:
    case INGOT_OP_SQRT:
    case INGOT_OP_ABS:
    case INGOT_OP_NEG:
    case INGOT_OP_ROUND:
    case INGOT_OP_CLAMP:
    case INGOT_OP_SOFTPLUS:
      return true;
    default:
      return false;
  }
}

/// The desc the primitive runs on: the input's blocked desc, or a flat vector for dense tensors.
std::optional<dnnl::memory::desc> run_md(OnednnBackend& be, const sdk::OpCall& c) {
  const ingot_tensor_desc& x = c.in[0];
  const ingot_tensor_desc& y = c.out[0];
  if (!is_compute_dtype(x.dtype) || y.dtype != x.dtype || !is_plain_host(x)) return std::nullopt;
  if (const dnnl::memory::desc* md = be.opaque_md(x)) {
    // y is either the same blocked layout, or dense strided (x is reordered into y first)
    const dnnl::memory::desc* ymd = be.opaque_md(y);
    if (ymd != nullptr ? *ymd != *md : !sdk::is_contiguous(y)) return std::nullopt;
    return *md;
  }
  if (!sdk::is_contiguous(x) || !sdk::is_contiguous(y) || sdk::numel(x) != sdk::numel(y)) return std::nullopt;
  return dnnl::memory::desc({sdk::numel(x)}, to_dnnl(x.dtype), tag::a);
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const dnnl::memory::desc& md,
                               const EltwiseSpec& s) {
  KeyBuilder key(c.op);
  key.add_md(md).add(s.algorithm).add(s.alpha).add(s.beta).add(be.threads());
  return be.plan(key.str(), [&] {
    auto d = dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, s.algorithm, md, s.alpha, s.beta);
    auto pd = dnnl::eltwise_forward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
    Plan p;
    p.prim = dnnl::eltwise_forward(pd);
    p.pd = pd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 1 || c.n_out != 1) return false;
  auto s = spec_of(c);
  auto md = run_md(be, c);
  if (!s || !md) return false;
  auto p = get_plan(be, c, *md, *s);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  auto s = spec_of(c);
  auto md = run_md(be, c);
  if (!s || !md) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn eltwise: unsupported call");
  auto p = get_plan(be, c, *md, *s);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn eltwise: " + p->impl);
  void* x = sdk::data_ptr(c.in[0]);
  void* y = sdk::data_ptr(c.out[0]);
  // blocked input, dense output: reorder into y, then run in place as a flat vector
  const bool to_dense = be.opaque_md(c.in[0]) != nullptr && be.opaque_md(c.out[0]) == nullptr;
  std::shared_ptr<Plan> run =
      to_dense ? get_plan(be, c, dnnl::memory::desc({sdk::numel(c.out[0])}, md->data_type(), tag::a), *s) : p;
  if (!run->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn eltwise: " + run->impl);
  ex.serial_if_small(sdk::numel(c.out[0]));
  size_t scratch = ex.reserve_scratchpad(*run);
  ex.allocate();
  if (to_dense) {
    ex.reorder(*md, x, strided_md(c.out[0]), y);
    x = y;
  }
  ex.bind(*run, DNNL_ARG_SRC, x);
  ex.bind(*run, DNNL_ARG_DST, y);
  ex.run(*run, c.op, scratch);
}

bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  const dnnl::memory::desc* md = be.opaque_md(c.in[0]);
  if (index != 0 || md == nullptr || outputs[0].dtype != c.in[0].dtype) return false;
  return set_opaque_output(be, outputs, 0, *md);
}

// oneDNN's eltwise forward runs with src and dst in one buffer.
bool in_place(OnednnBackend& be, const sdk::OpCall& c, int out, int in) {
  (void)be, (void)c;
  return out == 0 && in == 0;
}

}  // namespace

const OpFamily& eltwise_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout, nullptr, &in_place};
  return f;
}

}  // namespace ingot::onednn
