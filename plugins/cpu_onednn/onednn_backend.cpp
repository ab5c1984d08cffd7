// The cpu_onednn backend: dispatch to op families, plans, opaque layouts and threads.
#include "onednn_backend.h"

#include <omp.h>

#include "desc_util.h"
#include "dnnl_check.h"
#include "op_families.h"

namespace ingot::onednn {

namespace {
constexpr size_t kPlanCacheCapacity = 1024;
constexpr size_t kPackedWeightsCapacity = 256;

const OpFamily* const kFamilies[] = {
    &matmul_family(),       &conv_family(),       &pool_family(),       &eltwise_family(),   &binary_family(),
    &softmax_family(),      &batch_norm_family(), &layer_norm_family(), &reduction_family(), &reorder_family(),
    &optim_family(),        &select_family(),     &relu_bwd_family(),   &quant_family(),     &qlinear_family(),
    &qconv_family(),        &attention_family(),  &fill_family(),       &dropout_family(),   &cross_entropy_family(),
    &add_relu_bwd_family(), &index_family(),      &random_family()};
}  // namespace

OnednnBackend::OnednnBackend()
    : cache_(kPlanCacheCapacity), packed_(kPackedWeightsCapacity), threads_(omp_get_max_threads()) {
  DNNL_CHECK(engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0), "cpu_onednn: creating the oneDNN CPU engine");
  DNNL_CHECK(stream_ = dnnl::stream(engine_), "cpu_onednn: creating the oneDNN stream");
  for (int op = 0; op < INGOT_OP_COUNT; ++op) {
    for (const OpFamily* f : kFamilies) {
      if (f->handles(op)) families_[op] = f;
    }
  }
}

bool OnednnBackend::supports(const sdk::OpCall& call) {
  if (call.op < 0 || call.op >= INGOT_OP_COUNT || families_[call.op] == nullptr) return false;
  for (int i = 0; i < call.n_in; ++i) {
    const ingot_tensor_desc& d = call.in[i];
    if (d.device_kind != INGOT_DEVICE_CPU) return false;
    // an encoded handle (opaque_layout.h) reaches only the op that reads it encoded
    if (d.layout != INGOT_LAYOUT_STRIDED && opaque_md(d) == nullptr && !layouts_.read_by(d.layout_handle, call.op))
      return false;
  }
  for (int i = 0; i < call.n_out; ++i) {
    const ingot_tensor_desc& d = call.out[i];
    if (d.device_kind != INGOT_DEVICE_CPU) return false;
    if (d.layout != INGOT_LAYOUT_STRIDED && opaque_md(d) == nullptr) return false;
  }
  return families_[call.op]->supports(*this, call);
}

void OnednnBackend::execute(const sdk::OpCall& call, const ingot_exec_context& ctx) {
  if (call.op < 0 || call.op >= INGOT_OP_COUNT || families_[call.op] == nullptr) {
    throw sdk::Failure(INGOT_ERR_UNSUPPORTED, "cpu_onednn: op " + std::to_string(call.op) + " is not implemented");
  }
  if (ctx.num_threads > 0 && ctx.num_threads != threads_) {
    omp_set_num_threads(ctx.num_threads);
    threads_ = ctx.num_threads;
  }
  Exec ex(*this, ctx);
  // core's Backend prefixes the backend and op name to the message
  DNNL_CHECK(families_[call.op]->execute(call, ex), "cpu_onednn: executing a oneDNN primitive");
}

bool OnednnBackend::choose_output_layout(const sdk::OpCall& call, ingot_tensor_desc* outputs, int index) {
  if (call.op < 0 || call.op >= INGOT_OP_COUNT || families_[call.op] == nullptr) return false;
  const OpFamily* f = families_[call.op];
  if (f->choose_layout == nullptr || index < 0 || index >= call.n_out) return false;
  return f->choose_layout(*this, call, outputs, index);
}

void OnednnBackend::to_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                               const ingot_exec_context& ctx) {
  const OpaqueHandle* h = src.layout == INGOT_LAYOUT_OPAQUE ? layouts_.find_handle(src.layout_handle) : nullptr;
  if (h != nullptr && h->codec != nullptr) {
    Exec ex(*this, ctx);
    DNNL_CHECK(h->codec->to_strided(sdk::data_ptr(src), dst, ex), "cpu_onednn to_strided: decoding an encoded layout");
    return;
  }
  const dnnl::memory::desc* md = opaque_md(src);
  if (md == nullptr) throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cpu_onednn to_strided: source layout is not ours");
  if (!has_positive_strides(dst)) throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cpu_onednn to_strided: bad strides");
  Exec ex(*this, ctx);
  DNNL_CHECK(ex.reorder(*md, sdk::data_ptr(src), strided_md(dst), sdk::data_ptr(dst)),
             "cpu_onednn to_strided: reorder from blocked layout");
}

bool OnednnBackend::choose_input_layout(const sdk::OpCall& call, int index, ingot_tensor_desc* layout) {
  if (call.op < 0 || call.op >= INGOT_OP_COUNT || families_[call.op] == nullptr) return false;
  const OpFamily* f = families_[call.op];
  if (f->choose_input_layout == nullptr || index < 0 || index >= call.n_in) return false;
  return f->choose_input_layout(*this, call, index, layout);
}

void OnednnBackend::from_strided(const ingot_tensor_desc& src, const ingot_tensor_desc& dst,
                                 const ingot_exec_context& ctx) {
  const dnnl::memory::desc* md = opaque_md(dst);
  if (md == nullptr) throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cpu_onednn from_strided: target layout is not ours");
  if (!has_positive_strides(src)) throw sdk::Failure(INGOT_ERR_INVALID_ARGUMENT, "cpu_onednn from_strided: bad strides");
  Exec ex(*this, ctx);
  DNNL_CHECK(ex.reorder(strided_md(src), sdk::data_ptr(src), *md, sdk::data_ptr(dst)),
             "cpu_onednn from_strided: reorder into a blocked layout");
}

bool OnednnBackend::runs_in_place(const sdk::OpCall& call, int out, int in) {
  if (call.op < 0 || call.op >= INGOT_OP_COUNT || families_[call.op] == nullptr) return false;
  const OpFamily* f = families_[call.op];
  if (f->in_place == nullptr || out < 0 || out >= call.n_out || in < 0 || in >= call.n_in) return false;
  // One layout: the same blocked desc of ours, or both dense with one shape (no staging between).
  const ingot_tensor_desc &x = call.in[in], &y = call.out[out];
  if (x.dtype != y.dtype || x.ndim != y.ndim || x.device_kind != INGOT_DEVICE_CPU || y.device_kind != INGOT_DEVICE_CPU)
    return false;
  for (int d = 0; d < x.ndim; ++d)
    if (x.shape[d] != y.shape[d]) return false;
  const dnnl::memory::desc *xmd = opaque_md(x), *ymd = opaque_md(y);
  if (xmd != nullptr || ymd != nullptr) {
    if (xmd == nullptr || ymd == nullptr || *xmd != *ymd) return false;
  } else if (x.layout != INGOT_LAYOUT_STRIDED || y.layout != INGOT_LAYOUT_STRIDED || !sdk::is_contiguous(x) ||
             !sdk::is_contiguous(y)) {
    return false;
  }
  return supports(call) && f->in_place(*this, call, out, in);
}

void OnednnBackend::plan_cache_stats(ingot_plan_cache_stats& stats) {
  stats.entries = cache_.entries();
  stats.capacity = cache_.capacity();
  stats.hits = cache_.hits();
  stats.misses = cache_.misses();
}

const char* OnednnBackend::impl_name(int32_t op) {
  if (op < 0 || op >= INGOT_OP_COUNT || impl_names_[op].empty()) return nullptr;
  return impl_names_[op].c_str();
}

std::shared_ptr<Plan> OnednnBackend::reorder_plan(const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
  KeyBuilder key(-1);
  key.add_md(src).add_md(dst).add(threads_);
  return plan(key.str(), [&] {
    Plan p;
    auto pd = dnnl::reorder::primitive_desc(engine_, src, engine_, dst);
    p.prim = dnnl::reorder(pd);
    p.pd = pd;
    return p;
  });
}

std::optional<dnnl::memory::desc> OnednnBackend::md_of(const ingot_tensor_desc& d) const {
  if (d.layout == INGOT_LAYOUT_STRIDED) return strided_md(d);
  const dnnl::memory::desc* md = opaque_md(d);
  if (md == nullptr) return std::nullopt;
  return *md;
}

const dnnl::memory::desc* OnednnBackend::opaque_md(const ingot_tensor_desc& d) const {
  if (d.layout != INGOT_LAYOUT_OPAQUE || d.layout_handle == nullptr) return nullptr;
  return layouts_.find(d.layout_handle);
}

dnnl::primitive_attr OnednnBackend::user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void OnednnBackend::note_impl(int32_t op, const std::string& impl) {
  if (op >= 0 && op < INGOT_OP_COUNT && impl_names_[op] != impl) impl_names_[op] = impl;
}

bool set_opaque_output(OnednnBackend& be, ingot_tensor_desc* outputs, int index, const dnnl::memory::desc& md) {
  ingot_tensor_desc& o = outputs[index];
  o.layout = INGOT_LAYOUT_OPAQUE;
  o.layout_handle = be.layouts().create(md);
  o.nbytes = static_cast<int64_t>(md.get_size());
  return true;
}

}  // namespace ingot::onednn
