// Batch normalization family: BATCH_NORM forward (training: batch statistics, running stats
// updated in place with momentum and the unbiased variance; eval: running statistics) and
// BATCH_NORM_BWD in training mode, f32, with affine weight and bias. oneDNN works with variance;
// torch's save_invstd = 1 / sqrt(var + eps) is converted on the way in and out.
#include <cmath>

#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

using flags = dnnl::normalization_flags;

bool handles(int32_t op) { return op == INGOT_OP_BATCH_NORM || op == INGOT_OP_BATCH_NORM_BWD; }

bool per_channel_ok(const ingot_tensor_desc& t, int64_t channels) {
  return t.dtype == INGOT_F32 && sdk::numel(t) == channels && sdk::is_contiguous(t) &&
         t.device_kind == INGOT_DEVICE_CPU;
}

/// The x desc the primitive runs on (dense, or one of our blocked layouts), or nullopt.
std::optional<dnnl::memory::desc> data_md(OnednnBackend& be, const sdk::OpCall& c) {
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  const bool bwd = c.op == INGOT_OP_BATCH_NORM_BWD;
  if (c.n_in != 5 || c.n_out != 3 || !a.has_affine) return std::nullopt;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  if (x.dtype != INGOT_F32 || x.ndim < 2 || x.ndim > 5 || !is_plain_host(x)) return std::nullopt;
  const int64_t channels = x.shape[1];
  if (sdk::numel(x) / channels < 2 && (a.training || bwd)) return std::nullopt;
  for (int i = 2; i < 5; ++i) {
    if (!per_channel_ok(c.in[i], channels)) return std::nullopt;
  }
  if (!per_channel_ok(c.out[1], channels) || !per_channel_ok(c.out[2], channels)) return std::nullopt;
  if (c.out[0].dtype != INGOT_F32) return std::nullopt;
  if (bwd) {
    // eval-mode backward treats the statistics as constants: left to other backends
    if (!a.training || !sdk::is_contiguous(x) || !sdk::is_contiguous(c.in[0]) || !sdk::is_contiguous(c.out[0]))
      return std::nullopt;
    return plain_md(dims_of(x), dt::f32);
  }
  if (const dnnl::memory::desc* md = be.opaque_md(x)) {
    const dnnl::memory::desc* ymd = be.opaque_md(c.out[0]);
    if (ymd != nullptr ? *ymd != *md : !sdk::is_contiguous(c.out[0])) return std::nullopt;
    return *md;
  }
  if (!sdk::is_contiguous(x) || !sdk::is_contiguous(c.out[0])) return std::nullopt;
  return plain_md(dims_of(x), dt::f32);
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const dnnl::memory::desc& md) {
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  KeyBuilder key(c.op);
  key.add_md(md).add(a.training).add(a.eps).add(be.threads());
  return be.plan(key.str(), [&] {
    const auto eps = static_cast<float>(a.eps);
    const flags f = flags::use_scale | flags::use_shift;
    Plan p;
    if (c.op == INGOT_OP_BATCH_NORM && !a.training) {
      auto d = dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, eps,
                                                       f | flags::use_global_stats);
      auto pd =
          dnnl::batch_normalization_forward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
      p.prim = dnnl::batch_normalization_forward(pd);
      p.pd = pd;
      return p;
    }
    auto fd = dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, md, eps, f);
    auto fwd =
        dnnl::batch_normalization_forward::primitive_desc(fd, OnednnBackend::user_scratchpad_attr(), be.engine());
    if (c.op == INGOT_OP_BATCH_NORM) {
      p.prim = dnnl::batch_normalization_forward(fwd);
      p.pd = fwd;
      return p;
    }
    auto bd = dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, md, md, eps, f);
    auto pd =
        dnnl::batch_normalization_backward::primitive_desc(bd, OnednnBackend::user_scratchpad_attr(), be.engine(), fwd);
    p.prim = dnnl::batch_normalization_backward(pd);
    p.pd = pd;
    p.aux_pd = fwd;
    return p;
  });
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) {
  auto md = data_md(be, c);
  if (!md) return false;
  auto p = get_plan(be, c, *md);
  return p->prim && !is_ref_impl(p->impl);
}

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  auto md = data_md(be, c);
  if (!md) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn batch_norm: unsupported call");
  auto p = get_plan(be, c, *md);
  if (!p->prim) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn batch_norm: " + p->impl);
  const bool bwd = c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  const int64_t channels = x.shape[1];
  const int64_t count = sdk::numel(x) / channels;
  const auto eps = static_cast<float>(a.eps);
  const bool y_temp = !bwd && be.opaque_md(x) != nullptr && be.opaque_md(c.out[0]) == nullptr;
  const size_t var_slot = ex.reserve(static_cast<size_t>(channels) * sizeof(float));
  const size_t y_slot = y_temp ? ex.reserve(md->get_size()) : Exec::npos;
  const size_t scratch = ex.reserve_scratchpad(*p);
  ex.allocate();
  auto* var = static_cast<float*>(ex.ptr(var_slot));
  if (bwd) {
    const float* invstd = sdk::data_ptr<float>(c.in[4]);
    for (int64_t k = 0; k < channels; ++k) var[k] = 1.f / (invstd[k] * invstd[k]) - eps;
    ex.bind(*p, DNNL_ARG_DIFF_DST, sdk::data_ptr(c.in[0]));
    ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(c.in[1]));
    ex.bind(*p, DNNL_ARG_SCALE, sdk::data_ptr(c.in[2]));
    ex.bind(*p, DNNL_ARG_MEAN, sdk::data_ptr(c.in[3]));
    ex.bind(*p, DNNL_ARG_VARIANCE, var);
    ex.bind(*p, DNNL_ARG_DIFF_SRC, sdk::data_ptr(c.out[0]));
    ex.bind(*p, DNNL_ARG_DIFF_SCALE, sdk::data_ptr(c.out[1]));
    ex.bind(*p, DNNL_ARG_DIFF_SHIFT, sdk::data_ptr(c.out[2]));
    // oneDNN 2.6 insists on a SHIFT argument in backward although it never reads it
    ex.bind(*p, DNNL_ARG_SHIFT, sdk::data_ptr(c.out[2]));
    return ex.run(*p, c.op, scratch);
  }
  void* y = y_temp ? ex.ptr(y_slot) : sdk::data_ptr(c.out[0]);
  auto* save_mean = sdk::data_ptr<float>(c.out[1]);
  auto* save_invstd = sdk::data_ptr<float>(c.out[2]);
  auto* running_mean = sdk::data_ptr<float>(c.in[3]);
  auto* running_var = sdk::data_ptr<float>(c.in[4]);
  ex.bind(*p, DNNL_ARG_SRC, sdk::data_ptr(x));
  ex.bind(*p, DNNL_ARG_DST, y);
  ex.bind(*p, DNNL_ARG_SCALE, sdk::data_ptr(c.in[1]));
  ex.bind(*p, DNNL_ARG_SHIFT, sdk::data_ptr(c.in[2]));
  ex.bind(*p, DNNL_ARG_MEAN, a.training ? static_cast<void*>(save_mean) : running_mean);
  ex.bind(*p, DNNL_ARG_VARIANCE, a.training ? static_cast<void*>(var) : running_var);
  ex.run(*p, c.op, scratch);
  if (y_temp) ex.reorder(*md, y, plain_md(dims_of(c.out[0]), dt::f32), sdk::data_ptr(c.out[0]));
  const double m = a.momentum;
  for (int64_t k = 0; k < channels; ++k) {
    if (a.training) {
      save_invstd[k] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[k]) + a.eps));
      const double unbiased = static_cast<double>(var[k]) * static_cast<double>(count) / static_cast<double>(count - 1);
      running_mean[k] = static_cast<float>((1.0 - m) * running_mean[k] + m * save_mean[k]);
      running_var[k] = static_cast<float>((1.0 - m) * running_var[k] + m * unbiased);
    } else {
      save_mean[k] = running_mean[k];
      save_invstd[k] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(running_var[k]) + a.eps));
    }
  }
}

bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (c.op != INGOT_OP_BATCH_NORM || index != 0) return false;
  const dnnl::memory::desc* md = be.opaque_md(c.in[0]);
  if (md == nullptr) return false;
  return set_opaque_output(be, outputs, 0, *md);
}

}  // namespace

const OpFamily& batch_norm_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout};
  return f;
}

}  // namespace ingot::onednn
