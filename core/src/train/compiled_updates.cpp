// CompiledUpdates: whether the optimizer's step can be captured on its parameters' device, and the
// step as prepare_step() on the host, then the graph of run_updates().
#include "compiled_updates.h"

#include <fmt/format.h>

#include "ingot/runtime/backend.h"
#include "ingot/runtime/dispatch.h"
#include "ingot/runtime/op_info.h"

namespace ingot::train {

namespace {

// Whether backends of `device` run both CAPTURABLE updates there (not on the host).
bool runs_on(Device device, std::string& why_not) {
  const Tensor x = Tensor::empty(Shape{1}, DType::F32, device);
  const Tensor h = Tensor::empty(Shape{2}, DType::F64, device);
  auto sgd = make_attr<ingot_attr_sgd>();
  sgd.momentum = 0.9;
  auto adam = make_attr<ingot_attr_adam>();
  adam.beta1 = 0.9, adam.beta2 = 0.999, adam.step = 1;
  const struct {
    OpKind op;
    std::vector<Tensor> in;
    const void* attr;
  } probes[] = {{INGOT_OP_SGD_UPDATE_CAPTURABLE, {h, x, x, x}, &sgd},
                {INGOT_OP_ADAM_UPDATE_CAPTURABLE, {h, x, x, x, x}, &adam}};
  for (const auto& p : probes) {
    const char* name = op_info(p.op).name;
    try {
      const Backend& b = select_backend(p.op, p.in, {}, p.attr, device);
      if (b.device_kind() != device.kind) {
        why_not = fmt::format("no backend of {} runs {} (the {} backend would run it on the host)", device.str(), name,
                              b.name());
        return false;
      }
    } catch (const std::exception&) {
      why_not = fmt::format("no backend of {} runs {}", device.str(), name);
      return false;
    }
  }
  return true;
}

std::vector<Tensor> params_of(const optim::Optimizer& opt) {
  std::vector<Tensor> params;
  for (const optim::ParamGroup& g : opt.param_groups()) params.insert(params.end(), g.params.begin(), g.params.end());
  return params;
}

}  // namespace

std::unique_ptr<CompiledUpdates> CompiledUpdates::make(optim::Optimizer& opt, graph::CompileOptions options,
                                                       std::string& why_not) {
  if (!opt.capturable()) {
    why_not = fmt::format("the {} optimizer's updates cannot be captured", opt.type());
    return nullptr;
  }
  std::vector<Tensor> params = params_of(opt);
  if (params.empty() || !runs_on(params.front().device(), why_not)) return nullptr;
  if (!options.dump_dir.empty()) options.dump_dir /= "optimizer";
  return std::unique_ptr<CompiledUpdates>(new CompiledUpdates(opt, std::move(options), std::move(params)));
}

CompiledUpdates::CompiledUpdates(optim::Optimizer& opt, graph::CompileOptions options, std::vector<Tensor> params)
    : opt_(opt), compiled_(std::move(options), std::move(params)) {
  compiled_.set_label("optimizer");
}

void CompiledUpdates::step() {
  opt_.prepare_step();
  compiled_.run({}, {{"", opt_.updates_key()}}, [this] {
    opt_.run_updates();
    return std::vector<Tensor>{};
  });
  opt_.discard_updates();
}

}  // namespace ingot::train
