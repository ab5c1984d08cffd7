// Matmul family: a [..., M, K] x b [..., K, N] (+ bias [N]) -> [..., M, N] in f32, batch dims
// broadcast, transposes given as strides, bias and relu / gelu (erf) fused as post-ops. A 2-d b
// may come packed in the primitive's own blocked layout (choose_input_layout: a compiled graph's
// frozen weights, packed once), which saves the kernel repacking it on every call.
#include <optional>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) { return op == INGOT_OP_MATMUL; }

/// An operand right-aligned to `rank` dims; broadcast batch dims (size 1 or stride 0) get size
/// 1, and size-1 dims get a stride that keeps oneDNN's format detection happy.
std::optional<dnnl::memory::desc> operand_md(const ingot_tensor_desc& t, int rank) {
  if (t.ndim < 2 || t.ndim > rank) return std::nullopt;
  dims shape(static_cast<size_t>(rank), 1), strides(static_cast<size_t>(rank), 0);
  for (int i = 0; i < t.ndim; ++i) {
    const size_t o = static_cast<size_t>(rank - t.ndim + i);
    const bool matrix_dim = i >= t.ndim - 2;
    if (t.shape[i] != 1 && t.strides[i] <= 0 && matrix_dim) return std::nullopt;
    if (t.shape[i] != 1 && t.strides[i] > 0) {
      shape[o] = t.shape[i];
      strides[o] = t.strides[i];
    }
  }
  // size-1 dims: stride = span of the dims inside them so that the desc stays well formed
  for (int i = rank - 1; i >= 0; --i) {
    const auto u = static_cast<size_t>(i);
    if (strides[u] != 0) continue;
    int64_t span = 1;
    for (int j = i + 1; j < rank; ++j)
      span = std::max(span, strides[static_cast<size_t>(j)] * shape[static_cast<size_t>(j)]);
    strides[u] = span;
  }
  return dnnl::memory::desc(shape, to_dnnl(t.dtype), strides);
}

struct MatmulCall {
  dnnl::memory::desc a, b, y, bias;
  bool has_bias = false;
  int32_t activation = INGOT_ACT_NONE;
};

/// The call as oneDNN sees it; b may be one of our blocked layouts (packed weights) when 2-d.
std::optional<MatmulCall> analyse(OnednnBackend& be, const sdk::OpCall& c) {
  const auto& at = sdk::attr<ingot_attr_matmul>(c.attrs);
  if (c.n_out != 1 || c.n_in != (at.has_bias ? 3 : 2)) return std::nullopt;
  if (!fusable_activation(at.activation)) return std::nullopt;
  const ingot_tensor_desc& y = c.out[0];
  const dnnl::memory::desc* packed = c.n_in > 1 ? be.opaque_md(c.in[1]) : nullptr;
  for (int i = 0; i < c.n_in; ++i) {
    const bool layout_ok = c.in[i].layout == INGOT_LAYOUT_STRIDED || (i == 1 && packed != nullptr);
    if (c.in[i].dtype != y.dtype || !layout_ok || !is_plain_host(c.in[i])) return std::nullopt;
  }
  if (packed != nullptr && (y.ndim != 2 || c.in[1].ndim != 2)) return std::nullopt;
  if (!is_compute_dtype(y.dtype) || !sdk::is_contiguous(y) || !is_plain_host(y) || y.ndim < 2) return std::nullopt;
  MatmulCall m;
  auto a = operand_md(c.in[0], y.ndim);
  auto b = packed != nullptr ? std::optional<dnnl::memory::desc>(*packed) : operand_md(c.in[1], y.ndim);
  if (!a || !b) return std::nullopt;
  m.a = *a;
  m.b = *b;
  m.y = plain_md(dims_of(y), to_dnnl(y.dtype));
  m.activation = at.activation;
  m.has_bias = at.has_bias != 0;
  if (m.has_bias) {
    const ingot_tensor_desc& bias = c.in[2];
    const int64_t n = y.shape[y.ndim - 1];
    if (sdk::numel(bias) != n || !sdk::is_contiguous(bias)) return std::nullopt;
    dims bd(static_cast<size_t>(y.ndim), 1);
    bd.back() = n;
    m.bias = plain_md(bd, to_dnnl(y.dtype));
  }
  return m;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const MatmulCall& m) {
  KeyBuilder key(c.op);
  key.add_md(m.a).add_md(m.b).add_md(m.y).add(m.has_bias).add(m.activation).add(be.threads());
  if (m.has_bias) key.add_md(m.bias);
  return be.plan(key.str(), [&] {
    dnnl::primitive_attr attr = OnednnBackend::user_scratchpad_attr();
    if (m.activation != INGOT_ACT_NONE) {
      dnnl::post_ops po;
      append_activation(po, m.activation);
      attr.set_post_ops(po);
    }
    auto d = m.has_bias ? dnnl::matmul::desc(m.a, m.b, m.bias, m.y) : dnnl::matmul::desc(m.a, m.b, m.y);
    auto pd = dnnl::matmul::primitive_desc(d, attr, be.engine());
    Plan p;
    p.prim = dnnl::matmul(pd);
    p.pd = pd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto m = analyse(be, c);
  if (!m) return false;
  auto p = get_plan(be, c, *m);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  auto m = analyse(ex.backend(), c);
  if (!m) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn matmul: unsupported call");
  auto p = get_plan(ex.backend(), c, *m);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn matmul: " + p->impl);
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_SRC, m->a, sdk::data_ptr(c.in[0]));
  ex.bind(*p, DNNL_ARG_WEIGHTS, m->b, sdk::data_ptr(c.in[1]));
  if (m->has_bias) ex.bind(*p, DNNL_ARG_BIAS, m->bias, sdk::data_ptr(c.in[2]));
  ex.bind(*p, DNNL_ARG_DST, m->y, sdk::data_ptr(c.out[0]));
  ex.run(*p, c.op, scratch);
}

// Weights (input 1, 2-d, strided): the blocked layout the primitive picks for them (format any),
// when it is blocked and run by the kernel that runs the plain weights: brgemm copies plain weights
// into that layout on every call, so packing them once gives the same sums. A plain permutation
// (gemm's choice on AVX2) would change the kernel's order of summation: declined.
bool choose_input_layout(OnednnBackend& be, const sdk::OpCall& c, int index, ingot_tensor_desc* layout) {
  if (index != 1 || c.n_out != 1 || c.out[0].ndim != 2 || c.in[1].ndim != 2 || be.opaque_md(c.in[1]) != nullptr)
    return false;
  auto m = analyse(be, c);
  if (!m) return false;
  MatmulCall any = *m;
  any.b = dnnl::memory::desc(m->b.dims(), m->b.data_type(), tag::any);
  dnnl::memory::desc packed;
  try {
    auto d = m->has_bias ? dnnl::matmul::desc(any.a, any.b, any.bias, any.y) : dnnl::matmul::desc(any.a, any.b, any.y);
    packed = dnnl::matmul::primitive_desc(d, be.engine()).weights_desc();
  } catch (const dnnl::error&) {
    return false;
  }
  if (packed == m->b || packed.data.format_kind != dnnl_blocked || packed.data.format_desc.blocking.inner_nblks == 0)
    return false;
  MatmulCall with = *m;
  with.b = packed;
  auto plain = get_plan(be, c, *m), p = get_plan(be, c, with);
  if (!plain->prim || !p->prim || p->impl != plain->impl || is_ref_impl(p->impl)) return false;
  return set_opaque_output(be, layout, 0, packed);
}

}  // namespace

const OpFamily& matmul_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr, &choose_input_layout};
  return f;
}

}  // namespace ingot::onednn
