// Softmax family: softmax / log-softmax forward along one axis and their backward ops
// ((y, grad_y) -> grad_x), f32 dense tensors, through oneDNN's softmax_v2 primitives.
#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

bool handles(int32_t op) {
  return op == INGOT_OP_SOFTMAX || op == INGOT_OP_LOG_SOFTMAX || op == INGOT_OP_SOFTMAX_BWD ||
         op == INGOT_OP_LOG_SOFTMAX_BWD;
}

bool is_log(int32_t op) { return op == INGOT_OP_LOG_SOFTMAX || op == INGOT_OP_LOG_SOFTMAX_BWD; }
bool is_bwd(int32_t op) { return op == INGOT_OP_SOFTMAX_BWD || op == INGOT_OP_LOG_SOFTMAX_BWD; }

/// The wrapped axis, or -1 when the call is declined.
int axis_of(const sdk::OpCall& c) {
  if (c.n_in != (is_bwd(c.op) ? 2 : 1) || c.n_out != 1) return -1;
  const ingot_tensor_desc& y = c.out[0];
  for (int i = 0; i < c.n_in; ++i) {
    const ingot_tensor_desc& t = c.in[i];
    if (t.dtype != y.dtype || !sdk::is_contiguous(t) || !is_plain_host(t) || t.ndim != y.ndim) return -1;
    for (int d = 0; d < t.ndim; ++d) {
      if (t.shape[d] != y.shape[d]) return -1;
    }
  }
  if (!is_compute_dtype(y.dtype) || !sdk::is_contiguous(y) || y.ndim < 1) return -1;
  int axis = sdk::attr<ingot_attr_axis>(c.attrs).axis;
  if (axis < 0) axis += y.ndim;
  return axis >= 0 && axis < y.ndim ? axis : -1;
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, int axis) {
  const dims shape = dims_of(c.out[0]);
  KeyBuilder key(c.op);
  key.add(c.out[0].dtype)
      .add(shape.size())
      .add_bytes(shape.data(), shape.size() * sizeof(int64_t))
      .add(axis)
      .add(be.threads());
  return be.plan(key.str(), [&] {
    const auto md = plain_md(shape, to_dnnl(c.out[0].dtype));
    const auto algorithm = is_log(c.op) ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    auto fd = dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_training, algorithm, md, md, axis);
    auto fwd = dnnl::softmax_v2_forward::primitive_desc(fd, OnednnBackend::user_scratchpad_attr(), be.engine());
    Plan p;
    if (!is_bwd(c.op)) {
      p.prim = dnnl::softmax_v2_forward(fwd);
      p.pd = fwd;
      return p;
    }
    auto bd = dnnl::softmax_v2_backward::desc(algorithm, md, md, md, axis);
    auto pd = dnnl::softmax_v2_backward::primitive_desc(bd, OnednnBackend::user_scratchpad_attr(), be.engine(), fwd);
    p.prim = dnnl::softmax_v2_backward(pd);
    p.pd = pd;
    p.aux_pd = fwd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  const int axis = axis_of(c);
  if (axis < 0) return false;
  auto p = get_plan(be, c, axis);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  const int axis = axis_of(c);
  if (axis < 0) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn softmax: unsupported call");
  auto p = get_plan(ex.backend(), c, axis);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn softmax: " + p->impl);
  size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  if (is_bwd(c.op)) {
    ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.in[0]));
    ex.bind(*p, DNNL_ARG_DIFF_DST, sdk::data_ptr(c.in[1]));
    ex.bind(*p, DNNL_ARG_DIFF_SRC, sdk::data_ptr(c.out[0]));
  } else {
    ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(c.in[0]));
    ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.out[0]));
  }
  ex.run(*p, c.op, scratch);
}

}  // namespace

const OpFamily& softmax_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
