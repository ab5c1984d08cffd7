// SGD: option checks as torch.optim.SGD's, then one SGD_UPDATE over the group's parameters
// (two when some have a momentum buffer and others are at their first step).
#include "ingot/optim/sgd.h"

#include "ingot/base/error.h"
#include "ingot/ops/multi_tensor.h"
#include "ingot/runtime/op_info.h"

namespace ingot::optim {

const OptionTable<SgdOptions>& SgdOptions::table() {
  static const OptionTable<SgdOptions> t =
      OptionTable<SgdOptions>()
          .number("lr", &SgdOptions::lr, at_least(0.0), "learning rate, scaled by the schedule")
          .number("weight_decay", &SgdOptions::weight_decay, at_least(0.0), "L2 penalty added to the gradient")
          .number("momentum", &SgdOptions::momentum, at_least(0.0), "momentum factor")
          .number("dampening", &SgdOptions::dampening, closed(0.0, 1.0), "dampening for momentum")
          .flag("nesterov", &SgdOptions::nesterov, "Nesterov momentum (needs momentum > 0 and dampening 0)");
  return t;
}

SGD::SGD(const std::vector<Tensor>& params, const SgdOptions& options) : SGD(single_group(params), options) {}

SGD::SGD(const std::vector<GroupSpec>& groups, const SgdOptions& options)
    : Optimizer(SgdOptions::table().write(options)) {
  size_t total = 0;
  for (const GroupSpec& g : groups) total += g.params.size();
  INGOT_CHECK_AS(total > 0, ConfigError, "SGD: got an empty parameter list (does the model have parameters?)");
  for (const GroupSpec& g : groups) add_param_group(g);
}

int SGD::state_tensors_per_param() const { return defaults().get("momentum") > 0.0 ? 1 : 0; }

void SGD::check_options(const GroupOptions& options) const {
  const SgdOptions o = SgdOptions::table().read(options);
  INGOT_CHECK_AS(!o.nesterov || (o.momentum > 0.0 && o.dampening == 0.0), ConfigError,
                 "SGD: nesterov needs momentum > 0 and dampening 0 (got momentum {}, dampening {})", o.momentum,
                 o.dampening);
}

void SGD::update_group(const ParamGroup& group, const std::vector<ParamState*>& states,
                       const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
  const SgdOptions o = SgdOptions::table().read(group.options);
  auto op = make_attr<ingot_attr_sgd>();
  op.lr = o.lr;
  op.momentum = o.momentum;
  op.dampening = o.dampening;
  op.weight_decay = o.weight_decay;
  op.nesterov = o.nesterov;
  const Device device = params.front().device();
  const Tensor h = hyper(o.lr, 0.0, device);
  if (h.defined()) op.lr = 0.0;  // read from h: attributes that do not change between steps
  if (op.momentum == 0.0) {
    issue([params, grads, op, h] { sgd_update(params, grads, {}, op, h); });
    return;
  }
  // Parameters with a buffer, then those at their first momentum step (buffer = gradient).
  for (bool first : {false, true}) {
    std::vector<Tensor> p, g, bufs;
    for (size_t k = 0; k < params.size(); ++k) {
      auto& tensors = states[k]->tensors;
      auto it = tensors.find("momentum_buffer");
      if ((it == tensors.end()) != first) continue;
      if (first)
        it = tensors.emplace("momentum_buffer", Tensor::empty(params[k].shape(), params[k].dtype(), params[k].device()))
                 .first;
      p.push_back(params[k]);
      g.push_back(grads[k]);
      bufs.push_back(it->second);
    }
    if (p.empty()) continue;
    op.first_step = first;
    issue([p = std::move(p), g = std::move(g), bufs = std::move(bufs), op, h] { sgd_update(p, g, bufs, op, h); });
  }
}

}  // namespace ingot::optim
