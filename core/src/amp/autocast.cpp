// The autocast interceptor (installed in every process's dispatch chain when libingot loads: it
// costs one thread-local read per op while autocast is off), autocast regions, and the check
// that a dtype runs well on a device.
#include "ingot/amp/autocast.h"

#include <fmt/format.h>

#include <memory>

#include "cast_cache.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/linalg.h"
#include "ingot/runtime/autocast_policy.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/dispatch_chain.h"
#include "ingot/runtime/registry.h"

namespace ingot::amp {

namespace {

bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

/// Casts the inputs and output specs of an op its policy touches, then runs it.
class AutocastInterceptor final : public OpInterceptor {
 public:
  const char* name() const override { return "autocast"; }

  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    const AutocastState state = AutocastMode::get();
    if (!state.enabled) return next(call);
    const CastPolicy policy = autocast_policy(call.op);
    if (policy == CastPolicy::Fallthrough) return next(call);
    const std::vector<Tensor>& in = *call.inputs;
    DType target = policy == CastPolicy::Lower ? state.dtype : DType::F32;
    if (policy == CastPolicy::Lower) {
      // Like torch, f64 ops are left alone: they run in f64 (operands promoted, which the
      // functional op skipped because it expected autocast to cast them).
      for (const Tensor& t : in)
        if (t.defined() && t.dtype() == DType::F64) target = DType::F64;
    }
    std::vector<Tensor> inputs;
    std::vector<OutputSpec> outputs;
    bool changed = false;
    inputs.reserve(in.size());
    for (const Tensor& t : in) {
      const bool cast = t.defined() && is_floating(t.dtype()) && t.dtype() != target &&
                        (policy == CastPolicy::Lower || is_half(t.dtype()));
      inputs.push_back(cast ? detail::cast_for_autocast(t, target) : t);
      changed = changed || cast;
    }
    outputs.reserve(call.outputs->size());
    for (const OutputSpec& s : *call.outputs) {
      const bool cast = is_floating(s.dtype) && s.dtype != target &&
                        (policy == CastPolicy::Lower || is_half(s.dtype)) &&
                        !autocast_keeps_output(call.op, static_cast<int>(outputs.size()));
      outputs.push_back({s.shape, cast ? target : s.dtype});
      changed = changed || cast;
    }
    if (!changed) return next(call);
    return next(OpCall{call.op, &inputs, &outputs, call.attrs, call.device});
  }
};

const bool g_installed = [] {
  dispatch_chain::add(std::make_shared<AutocastInterceptor>(), InterceptorOrder::Autocast);
  return true;
}();

}  // namespace

AutocastRegion::AutocastRegion(DType dtype, const std::vector<Tensor>& weights, bool enabled) {
  if (!enabled) return;
  INGOT_CHECK(is_half(dtype), "autocast: dtype {} is not a low-precision float (use bf16 or fp16)", dtype_name(dtype));
  (void)g_installed;
  guard_.emplace(AutocastState{.enabled = true, .dtype = dtype});
  detail::cache_enter(weights);
}

AutocastRegion::~AutocastRegion() {
  if (guard_) detail::cache_leave();
}

const char* amp_dtype_name(DType dtype) { return dtype == DType::F16 ? "fp16" : dtype == DType::BF16 ? "bf16" : "f32"; }

std::string autocast_unsupported_reason(Device device, DType dtype) {
  const Backend& reference = BackendRegistry::instance().reference();
  // What runs a small matmul and conv in f32 and in `dtype` here.
  const auto runner = [&](OpKind op, DType t) -> const Backend& {
    const Tensor a = zeros(op == INGOT_OP_MATMUL ? Shape{8, 8} : Shape{1, 4, 8, 8}, t, device);
    const Tensor b = zeros(op == INGOT_OP_MATMUL ? Shape{8, 8} : Shape{4, 4, 3, 3}, t, device);
    if (op == INGOT_OP_MATMUL) return select_backend(op, {a, b}, {OutputSpec{{8, 8}, t}}, nullptr, device);
    const auto attr = conv2d_attr(Conv2dParams{}, false, Activation::None);
    return select_backend(op, {a, b}, {OutputSpec{{1, 4, 6, 6}, t}}, &attr, device);
  };
  for (const OpKind op : {INGOT_OP_MATMUL, INGOT_OP_CONV2D}) {
    const Backend& f32 = runner(op, DType::F32);
    const Backend& low = runner(op, dtype);
    if (&low == &reference && &f32 != &reference)
      return fmt::format(
          "train.amp.dtype {} on {}: no backend here runs {} in {} except the slow reference backend ({} runs it in "
          "f32), so mixed precision would be slower than f32; {}",
          amp_dtype_name(dtype), device.str(), op_info(op).name, amp_dtype_name(dtype), f32.name(),
          dtype == DType::F16 && device.is_cpu()
              ? "use dtype: bf16 on a CPU (oneDNN computes bf16 with AVX-512 BF16 or AMX), fp16 on a GPU"
              : "remove train.amp or run on a device with kernels for it");
  }
  return "";
}

}  // namespace ingot::amp
