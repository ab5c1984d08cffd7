// Binary family: add, sub, mul, div, maximum, minimum on f32 with NumPy broadcasting. oneDNN
// broadcasts only its second operand, so the first must span the output; a broadcast first
// operand is swapped for commutative ops and declined otherwise. Dense tensors only.
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
    auto pd = dnnl::binary::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
    Plan p;
    p.prim = dnnl::binary(pd);
    p.pd = pd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto bc = analyse(c);
  if (!bc) return false;
  auto p = get_plan(be, c, *bc);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  auto bc = analyse(c);
  if (!bc) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn binary: unsupported call");
  auto p = get_plan(ex.backend(), c, *bc);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn binary: " + p->impl);
  ex.serial_if_small(sdk::numel(c.out[0]));
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_SRC_0, sdk::data_ptr(c.in[bc->swapped ? 1 : 0]));
  ex.bind(*p, DNNL_ARG_SRC_1, sdk::data_ptr(c.in[bc->swapped ? 0 : 1]));
  ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.out[0]));
  ex.run(*p, c.op, scratch);
}

}  // namespace

const OpFamily& binary_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
