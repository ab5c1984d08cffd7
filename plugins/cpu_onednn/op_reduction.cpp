// Reduction family: SUM / MEAN / MAX / MIN of a dense f32 tensor to the output's shape (same
// rank, each dim kept or 1), through oneDNN's reduction primitive.
#include <optional>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

std::optional<dnnl::algorithm> alg_of(int32_t op) {
  switch (op) {
    case INGOT_OP_SUM:
      return dnnl::algorithm::reduction_sum;
    case INGOT_OP_MEAN:
      return dnnl::algorithm::reduction_mean;
    case INGOT_OP_MAX:
      return dnnl::algorithm::reduction_max;
    case INGOT_OP_MIN:
      return dnnl::algorithm::reduction_min;
    default:
      return std::nullopt;
  }
}

bool handles(int32_t op) { return alg_of(op).has_value(); }

bool shapes_ok(const sdk::OpCall& c) {
  if (c.n_in != 1 || c.n_out != 1) return false;
  const ingot_tensor_desc &x = c.in[0], &y = c.out[0];
  if (x.dtype != INGOT_F32 || y.dtype != INGOT_F32 || x.ndim != y.ndim || !is_plain_host(x) || !is_plain_host(y))
    return false;
  if (!sdk::is_contiguous(x) || !sdk::is_contiguous(y)) return false;
  for (int d = 0; d < x.ndim; ++d) {
    if (y.shape[d] != x.shape[d] && y.shape[d] != 1) return false;
  }
  return true;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c) {
  const dims x = dims_of(c.in[0]), y = dims_of(c.out[0]);
  KeyBuilder key(c.op);
  key.add(x.size()).add_bytes(x.data(), x.size() * sizeof(int64_t)).add_bytes(y.data(), y.size() * sizeof(int64_t));
  key.add(be.threads());
  return be.plan(key.str(), [&] {
    auto d = dnnl::reduction::desc(*alg_of(c.op), plain_md(x, dt::f32), plain_md(y, dt::f32), 0.f, 0.f);
    auto pd = dnnl::reduction::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
    Plan p;
    p.prim = dnnl::reduction(pd);
    p.pd = pd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  if (!shapes_ok(c)) return false;
  auto p = get_plan(be, c);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  if (!shapes_ok(c)) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn reduction: unsupported call");
  auto p = get_plan(ex.backend(), c);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn reduction: " + p->impl);
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(c.in[0]));
  ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.out[0]));
  ex.run(*p, c.op, scratch);
}

}  // namespace

const OpFamily& reduction_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
