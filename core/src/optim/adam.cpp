// Adam / AdamW: option checks as torch.optim's, lazily created moments, then one ADAM_UPDATE per
// group (one per distinct step count when parameters skipped updates, since bias corrections
// depend on each parameter's own count, like torch).
#include "ingot/optim/adam.h"

#include <map>

#include "ingot/base/error.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/multi_tensor.h"

namespace ingot::optim {

GroupOptions AdamOptions::group_options() const {
  GroupOptions o;
  o.lr = lr;
  o.beta1 = beta1;
  o.beta2 = beta2;
  o.eps = eps;
  o.weight_decay = weight_decay;
  o.amsgrad = amsgrad;
  return o;
}

Adam::Adam(const std::vector<Tensor>& params, const AdamOptions& options)
    : Adam(single_group(params), options, false) {}

Adam::Adam(const std::vector<GroupSpec>& groups, const AdamOptions& options) : Adam(groups, options, false) {}

Adam::Adam(const std::vector<GroupSpec>& groups, const AdamOptions& options, bool decoupled)
    : Optimizer(options.group_options()), decoupled_(decoupled) {
  size_t total = 0;
  for (const GroupSpec& g : groups) total += g.params.size();
  INGOT_CHECK_AS(total > 0, ConfigError, "{}: got an empty parameter list (does the model have parameters?)", type());
  for (const GroupSpec& g : groups) add_param_group(g);
}

void Adam::check_options(const GroupOptions& o) const {
  INGOT_CHECK_AS(o.lr >= 0.0, ConfigError, "{}: lr is {}, expected >= 0", type(), o.lr);
  INGOT_CHECK_AS(o.eps >= 0.0, ConfigError, "{}: eps is {}, expected >= 0", type(), o.eps);
  INGOT_CHECK_AS(o.beta1 >= 0.0 && o.beta1 < 1.0 && o.beta2 >= 0.0 && o.beta2 < 1.0, ConfigError,
                 "{}: betas are [{}, {}], expected each in [0, 1)", type(), o.beta1, o.beta2);
  INGOT_CHECK_AS(o.weight_decay >= 0.0, ConfigError, "{}: weight_decay is {}, expected >= 0", type(), o.weight_decay);
}

void Adam::update_group(const ParamGroup& group, const std::vector<ParamState*>& states,
                        const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
  const GroupOptions& o = group.options;
  struct Batch {
    std::vector<Tensor> p, g, m, v, vmax;
  };
  std::map<int64_t, Batch> by_step;  // almost always one entry
  for (size_t k = 0; k < params.size(); ++k) {
    ParamState& st = *states[k];
    auto& t = st.tensors;
    for (const char* name : {"exp_avg", "exp_avg_sq"})
      if (!t.count(name)) t[name] = zeros_like(params[k]);
    if (o.amsgrad && !t.count("max_exp_avg_sq")) t["max_exp_avg_sq"] = zeros_like(params[k]);
    Batch& b = by_step[++st.step];
    b.p.push_back(params[k]);
    b.g.push_back(grads[k]);
    b.m.push_back(t["exp_avg"]);
    b.v.push_back(t["exp_avg_sq"]);
    if (o.amsgrad) b.vmax.push_back(t["max_exp_avg_sq"]);
  }
  AdamUpdateOptions op;
  op.lr = o.lr;
  op.beta1 = o.beta1;
  op.beta2 = o.beta2;
  op.eps = o.eps;
  op.weight_decay = o.weight_decay;
  op.decoupled = decoupled_;
  op.amsgrad = o.amsgrad;
  for (const auto& [step, b] : by_step) {
    op.step = step;
    adam_update(b.p, b.g, b.m, b.v, b.vmax, op);
  }
}

AdamW::AdamW(const std::vector<Tensor>& params, const AdamWOptions& options)
    : Adam(single_group(params), options, true) {}

AdamW::AdamW(const std::vector<GroupSpec>& groups, const AdamWOptions& options) : Adam(groups, options, true) {}

}  // namespace ingot::optim
