// Example Ingot plugin: a backend "template" (CPU, priority 10) that runs ADD on contiguous f32
// tensors of equal shape and declines everything else, so core falls back to other backends.
// It includes only the SDK (ingot/plugin/*.h): copy this folder to start a plugin of your own.
#include <string>

#include "ingot/plugin/sdk.h"

namespace {

class TemplateBackend final : public ingot::sdk::ComputeImpl {
 public:
  bool supports(const ingot::sdk::OpCall& call) override {
    if (call.op != INGOT_OP_ADD || call.n_in != 2 || call.n_out != 1) return false;
    const ingot_tensor_desc& y = call.out[0];
    for (const ingot_tensor_desc* d : {&call.in[0], &call.in[1], &y}) {
      if (d->dtype != INGOT_F32 || d->device_kind != INGOT_DEVICE_CPU || !ingot::sdk::is_contiguous(*d)) return false;
      if (d->ndim != y.ndim) return false;  // no broadcasting: same rank ...
      for (int i = 0; i < d->ndim; ++i)
        if (d->shape[i] != y.shape[i]) return false;  // ... and same shape
    }
    return true;
  }

  void execute(const ingot::sdk::OpCall& call, const ingot_exec_context& ctx) override {
    (void)ctx;
    if (!supports(call)) throw ingot::sdk::Failure(INGOT_ERR_UNSUPPORTED, "template: only contiguous f32 ADD of equal shapes");
    const float* a = ingot::sdk::data_ptr<const float>(call.in[0]);
    const float* b = ingot::sdk::data_ptr<const float>(call.in[1]);
    float* y = ingot::sdk::data_ptr<float>(call.out[0]);
    const int64_t n = ingot::sdk::numel(call.out[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
  }
};

// Runs anywhere: a real plugin checks its driver or CPU features here, without side effects.
bool template_probe(std::string& reason) {
  (void)reason;
  return true;
}

void template_init(const ingot_host_api* host, ingot::sdk::Components& out) {
  // A host backend: device kind CPU, one device, host memory from core. A device backend derives
  // from ingot::sdk::DeviceImpl too and is built with ingot::sdk::make_device_backend.
  out.add(ingot::sdk::make_host_backend(new TemplateBackend(), "template", 10));
  ingot::sdk::log(host, INGOT_LOG_DEBUG, "template", "template backend ready");
}

}  // namespace

INGOT_PLUGIN("template", "0.1.0", "example plugin: contiguous f32 add", INGOT_KIND_BACKEND, template_probe, template_init)
