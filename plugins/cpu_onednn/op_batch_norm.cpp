// Batch normalization family: BATCH_NORM forward (training: batch statistics, running stats
// updated in place with momentum and the unbiased variance; eval: running statistics) and
// BATCH_NORM_BWD in training mode, with affine weight and bias. Data is f32, or bf16 (statistics
// still in f32, as torch computes them); the per-channel tensors are f32, or bf16 beside bf16 data,
// each on its own: they pass through small f32 arrays, the only form oneDNN takes. oneDNN works
// with variance; torch's save_invstd = 1 / sqrt(var + eps) is converted on the way in and out.
// 4-d data always runs in a channel-blocked layout (oneDNN's jit kernels; on plain NCHW it has only
// a slow generic loop): the layout of a blocked input, else dense inputs are reordered into one,
// and the data output is given that layout so the next conv reads it without a reorder.
// BATCH_NORM_RELU is the forward with oneDNN's fuse_norm_relu (its workspace, which only oneDNN's
// fused backward would read, goes to a scratch buffer).
#include <cmath>
#include <optional>
#include <vector>

#include "bf16.h"
#include "desc_util.h"
#include "op_families.h"

namespace ingot::onednn {
namespace {

using flags = dnnl::normalization_flags;

bool handles(int32_t op) {
  return op == INGOT_OP_BATCH_NORM || op == INGOT_OP_BATCH_NORM_RELU || op == INGOT_OP_BATCH_NORM_BWD;
}

/// f32, or bf16 when the data is bf16; dense, one value per channel.
bool per_channel_ok(const ingot_tensor_desc& t, int64_t channels, int32_t data_dtype) {
  const bool dtype_ok = t.dtype == INGOT_F32 || (t.dtype == INGOT_BF16 && data_dtype == INGOT_BF16);
  return dtype_ok && sdk::numel(t) == channels && sdk::is_contiguous(t) && t.layout == INGOT_LAYOUT_STRIDED &&
         t.device_kind == INGOT_DEVICE_CPU;
}

float load_channel(const ingot_tensor_desc& t, int64_t k) {
  return t.dtype == INGOT_BF16 ? bf16_to_float(sdk::data_ptr<const uint16_t>(t)[k]) : sdk::data_ptr<const float>(t)[k];
}

void store_channel(const ingot_tensor_desc& t, int64_t k, double v) {
  if (t.dtype == INGOT_BF16)
    sdk::data_ptr<uint16_t>(t)[k] = float_to_bf16(static_cast<float>(v));
  else
    sdk::data_ptr<float>(t)[k] = static_cast<float>(v);
}

/// The data tensors of a call: (x, y) forward, (grad_y, x, grad_x) backward.
std::vector<const ingot_tensor_desc*> data_tensors(const sdk::OpCall& c) {
  if (c.op == INGOT_OP_BATCH_NORM_BWD) return {&c.in[0], &c.in[1], &c.out[0]};
  return {&c.in[0], &c.out[0]};
}

/// Shapes, dtypes, attributes and per-channel tensors of a call this family can run.
bool call_ok(OnednnBackend& be, const sdk::OpCall& c) {
  const bool bwd = c.op == INGOT_OP_BATCH_NORM_BWD;
  if (c.n_in != 5 || c.n_out != 3) return false;
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  // eval-mode backward treats the statistics as constants: left to other backends
  if (!a.has_affine || (bwd && !a.training)) return false;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  if (x.ndim < 2 || x.ndim > 5) return false;
  if (x.dtype != INGOT_F32 && x.dtype != INGOT_BF16) return false;
  if (!is_compute_dtype(x.dtype)) return false;
  for (const ingot_tensor_desc* t : data_tensors(c)) {
    if (t->dtype != x.dtype || t->ndim != x.ndim || !is_plain_host(*t)) return false;
    for (int d = 0; d < x.ndim; ++d) {
      if (t->shape[d] != x.shape[d]) return false;
    }
    // ours (blocked) or dense
    if (be.opaque_md(*t) == nullptr && !sdk::is_contiguous(*t)) return false;
  }
  const int64_t channels = x.shape[1];
  if (sdk::numel(x) / channels < 2 && (a.training || bwd)) return false;
  for (int i = bwd ? 2 : 1; i < 5; ++i) {
    if (!per_channel_ok(c.in[i], channels, x.dtype)) return false;
  }
  return per_channel_ok(c.out[1], channels, x.dtype) && per_channel_ok(c.out[2], channels, x.dtype);
}

std::shared_ptr<Plan> get_plan(OnednnBackend& be, const sdk::OpCall& c, const dnnl::memory::desc& md) {
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  KeyBuilder key(c.op);
  key.add_md(md).add(a.training).add(a.eps).add(be.threads());
  return be.plan(key.str(), [&] {
    const auto eps = static_cast<float>(a.eps);
    const flags f = flags::use_scale | flags::use_shift;
    const flags fwd_flags = c.op == INGOT_OP_BATCH_NORM_RELU ? f | flags::fuse_norm_relu : f;
    Plan p;
    if (c.op != INGOT_OP_BATCH_NORM_BWD && !a.training) {
      auto d = dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, eps,
                                                       fwd_flags | flags::use_global_stats);
      auto pd =
          dnnl::batch_normalization_forward::primitive_desc(d, OnednnBackend::user_scratchpad_attr(), be.engine());
      p.prim = dnnl::batch_normalization_forward(pd);
      p.pd = pd;
      return p;
    }
    auto fd = dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, md, eps,
                                                      c.op == INGOT_OP_BATCH_NORM_BWD ? f : fwd_flags);
    auto fwd =
        dnnl::batch_normalization_forward::primitive_desc(fd, OnednnBackend::user_scratchpad_attr(), be.engine());
    if (c.op != INGOT_OP_BATCH_NORM_BWD) {
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

/// oneDNN's channel-blocked layout for dense 4-d data: 16 channels per block with AVX-512, else 8.
dnnl::memory::desc blocked_md(const dims& shape, dt type) {
  static const bool avx512 = effective_isa_name().rfind("avx512", 0) == 0;
  return dnnl::memory::desc(shape, type, avx512 ? tag::nChw16c : tag::nChw8c);
}

/// The layout a call runs in and its plan: x's (or grad_y's) when one of ours, else blocked for
/// 4-d data, else dense. Depends on the inputs only, so choose_layout and execute agree.
struct Run {
  dnnl::memory::desc md;
  std::shared_ptr<Plan> plan;
};

std::optional<Run> run_of(OnednnBackend& be, const sdk::OpCall& c) {
  if (!call_ok(be, c)) return std::nullopt;
  const bool bwd = c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  const dims shape = dims_of(x);
  const dt type = to_dnnl(x.dtype);
  std::vector<dnnl::memory::desc> candidates;
  if (const dnnl::memory::desc* md = be.opaque_md(x)) candidates.push_back(*md);
  if (const dnnl::memory::desc* md = bwd ? be.opaque_md(c.in[0]) : nullptr) candidates.push_back(*md);
  if (candidates.empty() && x.ndim == 4) candidates.push_back(blocked_md(shape, type));
  candidates.push_back(plain_md(shape, type));
  for (const dnnl::memory::desc& md : candidates) {
    auto p = get_plan(be, c, md);
    if (p->prim && !is_ref_impl(p->impl)) return Run{md, p};
  }
  return std::nullopt;
}

bool supports(OnednnBackend& be, const sdk::OpCall& c) { return run_of(be, c).has_value(); }

/// The f32 per-channel arrays oneDNN reads and writes, in one workspace slot.
enum Channel { kScale, kShift, kMean, kVar, kDiffScale, kDiffShift, kChannelArrays };

void execute(const sdk::OpCall& c, Exec& ex) {
  OnednnBackend& be = ex.backend();
  const auto& a = sdk::attr<ingot_attr_batch_norm>(c.attrs);
  auto run = run_of(be, c);
  if (!run) throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn batch_norm: unsupported call");
  Plan& p = *run->plan;
  const bool bwd = c.op == INGOT_OP_BATCH_NORM_BWD;
  const ingot_tensor_desc& x = bwd ? c.in[1] : c.in[0];
  const int64_t channels = x.shape[1];
  const int64_t count = sdk::numel(x) / channels;
  const auto eps = static_cast<float>(a.eps);
  // data tensors in another layout than the run's go through workspace buffers; the last is the output
  const std::vector<const ingot_tensor_desc*> data = data_tensors(c);
  std::vector<Exec::Staged> staged;
  for (const ingot_tensor_desc* t : data) staged.push_back(ex.stage(*be.md_of(*t), sdk::data_ptr(*t), run->md));
  const size_t arrays_slot = ex.reserve(static_cast<size_t>(kChannelArrays * channels) * sizeof(float));
  const dnnl::memory::desc ws_md = p.pd.workspace_desc();  // empty unless BATCH_NORM_RELU trains
  const size_t ws_slot = ex.reserve(ws_md.get_size());
  const size_t scratch = ex.reserve_scratchpad(p);
  ex.allocate();
  std::vector<void*> ptr(data.size());
  for (size_t i = 0; i < data.size(); ++i)
    ptr[i] = i + 1 < data.size() ? ex.staged_input(staged[i]) : ex.staged_output(staged[i]);
  auto* arrays = static_cast<float*>(ex.ptr(arrays_slot));
  const auto array = [&](Channel k) { return arrays + k * channels; };
  const auto load = [&](Channel k, const ingot_tensor_desc& t) {
    for (int64_t i = 0; i < channels; ++i) array(k)[i] = load_channel(t, i);
  };
  if (bwd) {
    load(kScale, c.in[2]);
    load(kMean, c.in[3]);
    for (int64_t k = 0; k < channels; ++k) {
      const float invstd = load_channel(c.in[4], k);
      array(kVar)[k] = 1.f / (invstd * invstd) - eps;
    }
    ex.bind(p, DNNL_ARG_DIFF_DST, run->md, ptr[0]);
    ex.bind(p, DNNL_ARG_SRC, run->md, ptr[1]);
    ex.bind(p, DNNL_ARG_SCALE, array(kScale));
    ex.bind(p, DNNL_ARG_MEAN, array(kMean));
    ex.bind(p, DNNL_ARG_VARIANCE, array(kVar));
    ex.bind(p, DNNL_ARG_DIFF_SRC, run->md, ptr[2]);
    ex.bind(p, DNNL_ARG_DIFF_SCALE, array(kDiffScale));
    ex.bind(p, DNNL_ARG_DIFF_SHIFT, array(kDiffShift));
    // oneDNN 2.6 insists on a SHIFT argument in backward although it never reads it
    ex.bind(p, DNNL_ARG_SHIFT, array(kShift));
    ex.run(p, c.op, scratch);
    ex.flush(staged[2]);
    for (int64_t k = 0; k < channels; ++k) {
      store_channel(c.out[1], k, array(kDiffScale)[k]);
      store_channel(c.out[2], k, array(kDiffShift)[k]);
    }
    return;
  }
  load(kScale, c.in[1]);
  load(kShift, c.in[2]);
  if (!a.training) {
    load(kMean, c.in[3]);
    load(kVar, c.in[4]);
  }
  ex.bind(p, DNNL_ARG_SRC, run->md, ptr[0]);
  ex.bind(p, DNNL_ARG_DST, run->md, ptr[1]);
  ex.bind(p, DNNL_ARG_SCALE, array(kScale));
  ex.bind(p, DNNL_ARG_SHIFT, array(kShift));
  ex.bind(p, DNNL_ARG_MEAN, array(kMean));
  ex.bind(p, DNNL_ARG_VARIANCE, array(kVar));
  if (ws_md.get_size() > 0) ex.bind(p, DNNL_ARG_WORKSPACE, ws_md, ex.ptr(ws_slot));
  ex.run(p, c.op, scratch);
  ex.flush(staged[1]);
  const double m = a.momentum;
  for (int64_t k = 0; k < channels; ++k) {
    const double mean = array(kMean)[k], var = array(kVar)[k];
    store_channel(c.out[1], k, mean);
    store_channel(c.out[2], k, 1.0 / std::sqrt(var + a.eps));
    if (a.training) {
      const double unbiased = var * static_cast<double>(count) / static_cast<double>(count - 1);
      store_channel(c.in[3], k, (1.0 - m) * load_channel(c.in[3], k) + m * mean);
      store_channel(c.in[4], k, (1.0 - m) * load_channel(c.in[4], k) + m * unbiased);
    }
  }
}

/// The data output (y, or grad_x) takes the run's layout when that is blocked.
bool choose_layout(OnednnBackend& be, const sdk::OpCall& c, ingot_tensor_desc* outputs, int index) {
  if (index != 0) return false;
  auto run = run_of(be, c);
  if (!run || run->md == plain_md(dims_of(outputs[0]), to_dnnl(outputs[0].dtype))) return false;
  return set_opaque_output(be, outputs, 0, run->md);
}

// oneDNN's batch normalization runs in place: src and dst forward, diff_dst and diff_src backward.
bool in_place(OnednnBackend& be, const sdk::OpCall& c, int out, int in) {
  (void)be, (void)c;
  return out == 0 && in == 0;
}

}  // namespace

const OpFamily& batch_norm_family() {
  static const OpFamily f{&handles, &supports, &execute, &choose_layout, nullptr, &in_place};
  return f;
}

}  // namespace ingot::onednn
