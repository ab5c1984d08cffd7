// Binary family: add, sub, mul, div, maximum, minimum on f32 with NumPy broadcasting, and ADD_RELU
// (add with oneDNN's relu as a post-op: the code its relu primitive runs, so the bits of ADD then
// RELU). oneDNN
// broadcasts only its second operand, so the first must span the output; a broadcast first
// operand is swapped for commutative ops and declined otherwise. Dense tensors; or a blocked
// activation with a second one of the same shape (a residual add), blocked alike or dense (then
// reordered into the blocked layout first): those run blocked and give a blocked output.
#include <algorithm>
#include <array>
#include <optional>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

using alg = dnnl::algorithm;

std::optional<alg> alg_of(int32_t op) {
  switch (op) {
    case INGOT_OP_ADD:
    case INGOT_OP_ADD_RELU:
      return alg::binary_add;
    case INGOT_OP_SUB:
      return alg::binary_sub;
    case INGOT_OP_MUL:
      return alg::binary_mul;
    case INGOT_OP_DIV:
      return alg::binary_div;
    case INGOT_OP_MAXIMUM:
      return alg::binary_max;
    case INGOT_OP_MINIMUM:
      return alg::binary_min;
    default:
      return std::nullopt;
  }
}

bool handles(int32_t op) { return alg_of(op).has_value(); }

bool commutative(int32_t op) { return op != INGOT_OP_SUB && op != INGOT_OP_DIV; }

/// a op b == b op a bit for bit (NaNs and signed zeros included).
bool swaps_exactly(int32_t op) { return op == INGOT_OP_ADD || op == INGOT_OP_ADD_RELU || op == INGOT_OP_MUL; }

/// True when the result is written over the second input (in place): it is then bound as src0.
bool src0_is_second(const sdk::OpCall& c) {
  return swaps_exactly(c.op) && sdk::data_ptr(c.out[0]) == sdk::data_ptr(c.in[1]) &&
         sdk::data_ptr(c.in[0]) != sdk::data_ptr(c.in[1]);
}

/// The primitive's attributes: ADD_RELU's relu as an eltwise post-op.
dnnl::primitive_attr attr_of(int32_t op) {
  dnnl::primitive_attr attr = OnednnBackend::user_scratchpad_attr();
  if (op == INGOT_OP_ADD_RELU) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  return attr;
}

/// Dims of one operand, kept on the stack (no allocation on the dispatch path).
struct Dims {
  int rank = 0;
  std::array<int64_t, INGOT_MAX_DIMS> d{};
  bool operator==(const Dims& o) const { return rank == o.rank && d == o.d; }
  dims vec() const { return dims(d.begin(), d.begin() + rank); }
};

/// An input as oneDNN sees it: right-aligned to the output's rank, broadcast dims (size 1 or
/// stride 0) set to 1, and the remaining dims row-major dense; nullopt otherwise.
std::optional<Dims> operand_dims(const ingot_tensor_desc& in, int rank) {
  Dims r;
  r.rank = rank;
  std::fill(r.d.begin(), r.d.begin() + rank, 1);
  int64_t expected = 1;
  for (int i = in.ndim - 1; i >= 0; --i) {
    const int o = rank - (in.ndim - i);
    if (o < 0) return std::nullopt;
    if (in.shape[i] == 1 || in.strides[i] == 0) continue;
    if (in.strides[i] != expected) return std::nullopt;
    r.d[static_cast<size_t>(o)] = in.shape[i];
    expected *= in.shape[i];
  }
  return r;
}

struct BinaryCall {
  alg algorithm;
  bool swapped = false;
  Dims a, b, y;
  dt type = dt::f32;
};

std::optional<BinaryCall> analyse(const sdk::OpCall& c) {
  if (c.n_in != 2 || c.n_out != 1) return std::nullopt;
  const ingot_tensor_desc& y = c.out[0];
  for (int i = 0; i < 2; ++i) {
    if (c.in[i].dtype != y.dtype || c.in[i].layout != INGOT_LAYOUT_STRIDED || !is_plain_host(c.in[i]))
      return std::nullopt;
  }
  if (!is_compute_dtype(y.dtype) || !sdk::is_contiguous(y) || !is_plain_host(y)) return std::nullopt;
  const int rank = y.ndim == 0 ? 1 : y.ndim;
  auto a = operand_dims(c.in[0], rank);
  auto b = operand_dims(c.in[1], rank);
  if (!a || !b) return std::nullopt;
  BinaryCall bc{*alg_of(c.op), false, *a, *b, {}, to_dnnl(y.dtype)};
  bc.y.rank = rank;
  for (int i = 0; i < rank; ++i) bc.y.d[static_cast<size_t>(i)] = y.ndim == 0 ? 1 : y.shape[i];
  if (!(bc.a == bc.y)) {
    if (!(bc.b == bc.y) || !commutative(c.op)) return std::nullopt;
    std::swap(bc.a, bc.b);
    bc.swapped = true;
  }
  return bc;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const BinaryCall& bc) {
  KeyBuilder key(c.op);
  key.add(bc.type).add(bc.y.rank).add_bytes(bc.y.d.data(), static_cast<size_t>(bc.y.rank) * sizeof(int64_t));
  key.add_bytes(bc.b.d.data(), static_cast<size_t>(bc.b.rank) * sizeof(int64_t)).add(be.threads());
  return be.plan(key.str(), [&] {
    auto md_y = plain_md(bc.y.vec(), bc.type);
    auto d = dnnl::binary::desc(bc.algorithm, md_y, plain_md(bc.b.vec(), bc.type), md_y);
    auto pd = dnnl::binary::primitive_desc(d, attr_of(c.op), be.engine());
    Plan p;
    p.prim = dnnl::binary(pd);
    p.pd = pd;
    return p;
  });
}

/// The blocked desc a call runs in: the inputs' common one, or that of the one blocked input when
/// the other is dense with the same shape (it is reordered first); nullptr for other calls. The
/// output has that layout (choose_layout gives it) or is dense (the result is reordered into it).
const dnnl::memory::desc* blocked_md(OnednnBackend& be, const sdk::OpCall& c) {
  if (c.n_in != 2 || c.n_out != 1 || !alg_of(c.op)) return nullptr;
  const ingot_tensor_desc &x0 = c.in[0], &x1 = c.in[1], &y = c.out[0];
  if (x0.dtype != y.dtype || x1.dtype != y.dtype || !is_compute_dtype(y.dtype)) return nullptr;
  const dnnl::memory::desc *a = be.opaque_md(x0), *b = be.opaque_md(x1);
  const dnnl::memory::desc* md = a != nullptr ? a : b;
  if (md == nullptr || (a != nullptr && b != nullptr && *a != *b)) return nullptr;
  if (a == nullptr || b == nullptr) {  // the other one: dense, same shape, no broadcasting
    const ingot_tensor_desc& other = a == nullptr ? x0 : x1;
    if (!sdk::is_contiguous(other) || !is_plain_host(other) || other.ndim != y.ndim) return nullptr;
    for (int d = 0; d < y.ndim; ++d)
      if (other.shape[d] != y.shape[d]) return nullptr;
  }
  const dnnl::memory::desc* ymd = be.opaque_md(y);
  if (ymd != nullptr ? *ymd != *md : !sdk::is_contiguous(y)) return nullptr;
  return md;
}

std::shared_ptr<Plan> get_blocked_plan(OnednnBackend& be, const sdk::OpCall& c, const dnnl::memory::desc& md) {
  KeyBuilder key(c.op);
  key.add_md(md).add(be.threads());
  return be.plan(key.str(), [&] {
    auto d = dnnl::binary::desc(*alg_of(c.op), md, md, md);
    auto pd = dnnl::binary::primitive_desc(d, attr_of(c.op), be.engine());
    Plan p;
    p.prim = dnnl::binary(pd);
    p.pd = pd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  if (const dnnl::memory::desc* md = blocked_md(be, c)) {
    auto p = get_blocked_plan(be, c, *md);
    return p->prim && !is_ref_impl(p->impl);
  }
  auto bc = analyse(c);
  if (!bc) return false;
  auto p = get_plan(be, c, *bc);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  if (const dnnl::memory::desc* md = blocked_md(be, c)) {
    auto p = get_blocked_plan(be, c, *md);
    if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn binary: " + p->impl);
    ex.serial_if_small(sdk::numel(c.out[0]));
    const size_t scratch = ex.reserve_scratchpad(*p);
    // a dense input, or a dense output, goes through a workspace buffer in the blocked layout
    const auto stage = [&](const ingot_tensor_desc& t) { return ex.stage(*be.md_of(t), sdk::data_ptr(t), *md); };
    const int first = src0_is_second(c) ? 1 : 0;
    const Exec::Staged a = stage(c.in[first]), b = stage(c.in[1 - first]), y = stage(c.out[0]);
    ex.allocate();
    ex.bind(*p, DNNL_ARG_SRC_0, ex.staged_input(a));
    ex.bind(*p, DNNL_ARG_SRC_1, ex.staged_input(b));
    ex.bind(*p, DNNL_ARG_DST, ex.staged_output(y));
    ex.run(*p, c.op, scratch);
    ex.flush(y);
    return;
  }
  auto bc = analyse(c);
  if (!bc) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn binary: unsupported call");
  auto p = get_plan(ex.backend(), c, *bc);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn binary: " + p->impl);
  ex.serial_if_small(sdk::numel(c.out[0]));
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  // src0 spans the output; when both do and the result goes over the second, that one
  const int first = bc->swapped || (bc->b == bc->y && src0_is_second(c)) ? 1 : 0;
  ex.bind(*p, DNNL_ARG_SRC_0, sdk::data_ptr(c.in[first]));
  ex.bind(*p, DNNL_ARG_SRC_1, sdk::data_ptr(c.in[1 - first]));
  ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.out[0]));
  ex.run(*p, c.op, scratch);
}

// A blocked input (and no broadcasting): the result is blocked alike.
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (index != 0 || c.n_in != 2) return false;
  for (int i = 0; i < 2; ++i) {
    if (c.in[i].ndim != outputs[0].ndim) return false;
    for (int d = 0; d < outputs[0].ndim; ++d)
      if (outputs[0].shape[d] != c.in[i].shape[d]) return false;
  }
  sdk::OpCall probe = c;
  probe.out = outputs;
  const dnnl::memory::desc* md = blocked_md(be, probe);
  return md != nullptr && set_opaque_output(be, outputs, 0, *md);
}

// oneDNN's binary writes dst over src0; the second input of ADD, ADD_RELU or MUL is bound as src0
// when the result goes over it (a + b and b + a round alike). Not ADD_RELU in a padded blocked
// layout (channels not a multiple of the block): oneDNN 2.6's kernel with the relu post-op then
// gives wrong values in place (tests/plugins/test_cpu_onednn_in_place.cpp).
bool in_place(OnednnBackend& be, const sdk::OpCall& c, int out, int in) {
  if (out != 0 || (in != 0 && !(in == 1 && swaps_exactly(c.op)))) return false;
  if (c.op != INGOT_OP_ADD_RELU) return true;
  const dnnl::memory::desc* md = be.opaque_md(c.out[0]);
  if (md == nullptr) return true;
  for (int d = 0; d < md->data.ndims; ++d)
    if (md->data.padded_dims[d] != md->data.dims[d]) return false;
  return true;
}

}  // namespace

const OpFamily& binary_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout, nullptr, &in_place};
  return f;
}

}  // namespace ingot::onednn
