// Layer normalization family: LAYER_NORM forward ((x, w, b) -> (y, mean, rstd)) and
// LAYER_NORM_BWD ((gy, x, mean, rstd, w) -> (gx, gw, gb)) over the last normalized_ndim dims,
// viewed as a dense [rows, features] f32 matrix, with affine weight and bias. oneDNN works with
// the variance; torch's rstd = 1 / sqrt(var + eps) is converted on the way in and out.
#include <cmath>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

using flags = dnnl::normalization_flags;

bool handles(int32_t op) { return op == INGOT_OP_LAYER_NORM || op == INGOT_OP_LAYER_NORM_BWD; }

bool dense_f32(const ingot_tensor_desc& t, int64_t n) {
  return t.dtype == INGOT_F32 && sdk::numel(t) == n && sdk::is_contiguous(t) && t.device_kind == INGOT_DEVICE_CPU;
}

/// [rows, features] of the call, or {0, 0} when declined.
dims rows_features(const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
  const bool bwd = c.op == INGOT_OP_LAYER_NORM_BWD;
  if (c.n_in != (bwd ? 5 : 3) || c.n_out != 3 || !a.has_affine) return {0, 0};
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  if (a.normalized_ndim < 1 || a.normalized_ndim > x.ndim || !is_plain_host(x)) return {0, 0};
  int64_t rows = 1, features = 1;
  for (int d = 0; d < x.ndim; ++d) (d < x.ndim - a.normalized_ndim ? rows : features) *= x.shape[d];
  const int64_t n = rows * features;
  const bool ok = bwd ? dense_f32(c.in[0], n) && dense_f32(c.in[1], n) && dense_f32(c.in[2], rows) &&
                            dense_f32(c.in[3], rows) && dense_f32(c.in[4], features) && dense_f32(c.out[0], n) &&
                            dense_f32(c.out[1], features) && dense_f32(c.out[2], features)
                      : dense_f32(c.in[0], n) && dense_f32(c.in[1], features) && dense_f32(c.in[2], features) &&
                            dense_f32(c.out[0], n) && dense_f32(c.out[1], rows) && dense_f32(c.out[2], rows);
  return ok ? dims{rows, features} : dims{0, 0};
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const dims& rf) {
  const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
  KeyBuilder key(c.op);
  key.add(rf[0]).add(rf[1]).add(a.eps).add(be.threads());
  return be.plan(key.str(), [&] {
    const auto md = plain_md(rf, dt::f32);
    const auto eps = static_cast<float>(a.eps);
    const flags f = flags::use_scale | flags::use_shift;
    auto fd = dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_training, md, eps, f);
    auto fwd =
        dnnl::layer_normalization_forward::primitive_desc(fd, OnednnBackend::user_scratchpad_attr(), be.engine());
    Plan p;
    if (c.op == INGOT_OP_LAYER_NORM) {
      p.prim = dnnl::layer_normalization_forward(fwd);
      p.pd = fwd;
      return p;
    }
    auto bd = dnnl::layer_normalization_backward::desc(dnnl::prop_kind::backward, md, md, eps, f);
    auto pd =
        dnnl::layer_normalization_backward::primitive_desc(bd, OnednnBackend::user_scratchpad_attr(), be.engine(), fwd);
    p.prim = dnnl::layer_normalization_backward(pd);
    p.pd = pd;
    p.aux_pd = fwd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  const dims rf = rows_features(c);
  if (rf[0] == 0) return false;
  auto p = get_plan(be, c, rf);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  const auto& a = sdk::attr<ingot_attr_layer_norm>(c.attrs);
  const dims rf = rows_features(c);
  if (rf[0] == 0) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn layer_norm: unsupported call");
  auto p = get_plan(ex.backend(), c, rf);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn layer_norm: " + p->impl);
  const int64_t rows = rf[0];
  const auto eps = static_cast<float>(a.eps);
  const size_t var_slot = ex.reserve(static_cast<size_t>(rows) * sizeof(float));
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  auto* var = static_cast<float*>(ex.ptr(var_slot));
  if (c.op == INGOT_OP_LAYER_NORM_BWD) {
    const float* rstd = sdk::data_ptr<float>(c.in[3]);
    for (int64_t r = 0; r < rows; ++r) var[r] = 1.f / (rstd[r] * rstd[r]) - eps;
    ex.bind(*p, DNNL_ARG_DIFF_DST, sdk::data_ptr(c.in[0]));
    ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(c.in[1]));
    ex.bind(*p, DNNL_ARG_MEAN, sdk::data_ptr(c.in[2]));
    ex.bind(*p, DNNL_ARG_VARIANCE, var);
    ex.bind(*p, DNNL_ARG_SCALE, sdk::data_ptr(c.in[4]));
    ex.bind(*p, DNNL_ARG_DIFF_SRC, sdk::data_ptr(c.out[0]));
    ex.bind(*p, DNNL_ARG_DIFF_SCALE, sdk::data_ptr(c.out[1]));
    ex.bind(*p, DNNL_ARG_DIFF_SHIFT, sdk::data_ptr(c.out[2]));
    // oneDNN 2.6 insists on a SHIFT argument in backward although it never reads it
    ex.bind(*p, DNNL_ARG_SHIFT, sdk::data_ptr(c.out[2]));
    return ex.run(*p, c.op, scratch);
  }
  ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(c.in[0]));
  ex.bind(*p, DNNL_ARG_SCALE, sdk::data_ptr(c.in[1]));
  ex.bind(*p, DNNL_ARG_SHIFT, sdk::data_ptr(c.in[2]));
  ex.bind(*p, DNNL_ARG_DST, sdk::data_ptr(c.out[0]));
  ex.bind(*p, DNNL_ARG_MEAN, sdk::data_ptr(c.out[1]));
  ex.bind(*p, DNNL_ARG_VARIANCE, var);
  ex.run(*p, c.op, scratch);
  auto* rstd = sdk::data_ptr<float>(c.out[2]);
  for (int64_t r = 0; r < rows; ++r) rstd[r] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[r]) + a.eps));
}

}  // namespace

const OpFamily& layer_norm_family() {
  static const OpFamily f{&handles, &supports, &execute, nullptr};
  return f;
}

}  // namespace ingot::onednn
