// SGD: option checks as torch.optim.SGD's, then one SGD_UPDATE over the group's parameters
// (two when some have a momentum buffer and others are at their first step).
#include "ingot/optim/sgd.h"

#include "ingot/base/error.h"
#include "ingot/ops/multi_tensor.h"

namespace ingot::optim {

GroupOptions SgdOptions::group_options() const {
  GroupOptions o;
  o.lr = lr;
  o.momentum = momentum;
  o.dampening = dampening;
  o.weight_decay = weight_decay;
  o.nesterov = nesterov;
  return o;
}

SGD::SGD(const std::vector<Tensor>& params, const SgdOptions& options) : SGD(single_group(params), options) {}

SGD::SGD(const std::vector<GroupSpec>& groups, const SgdOptions& options) : Optimizer(options.group_options()) {
  size_t total = 0;
  for (const GroupSpec& g : groups) total += g.params.size();
  INGOT_CHECK_AS(total > 0, ConfigError, "SGD: got an empty parameter list (does the model have parameters?)");
  for (const GroupSpec& g : groups) add_param_group(g);
}

void SGD::check_options(const GroupOptions& o) const {
  INGOT_CHECK_AS(o.lr >= 0.0, ConfigError, "SGD: lr is {}, expected >= 0", o.lr);
  INGOT_CHECK_AS(o.momentum >= 0.0, ConfigError, "SGD: momentum is {}, expected >= 0", o.momentum);
  INGOT_CHECK_AS(o.weight_decay >= 0.0, ConfigError, "SGD: weight_decay is {}, expected >= 0", o.weight_decay);
  INGOT_CHECK_AS(!o.nesterov || (o.momentum > 0.0 && o.dampening == 0.0), ConfigError,
                 "SGD: nesterov needs momentum > 0 and dampening 0 (got momentum {}, dampening {})", o.momentum,
                 o.dampening);
}

void SGD::update_group(const ParamGroup& group, const std::vector<ParamState*>& states,
                       const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
  ingot::SgdOptions op;
  op.lr = group.options.lr;
  op.momentum = group.options.momentum;
  op.dampening = group.options.dampening;
  op.weight_decay = group.options.weight_decay;
  op.nesterov = group.options.nesterov;
  if (op.momentum == 0.0) {
    sgd_update(params, grads, {}, op);
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
    sgd_update(p, g, bufs, op);
  }
}

}  // namespace ingot::optim
