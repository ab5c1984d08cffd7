// Adam / AdamW: options with torch.optim's ranges, lazily created moments, then one ADAM_UPDATE per
// group (one per distinct step count when parameters skipped updates, since bias corrections
// depend on each parameter's own count, like torch).
#include "ingot/optim/adam.h"

#include <map>

#include "ingot/base/error.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/multi_tensor.h"
#include "ingot/runtime/op_info.h"

namespace ingot::optim {

namespace {

// Adam's and AdamW's options differ in weight_decay's default only.
OptionTable<AdamOptions> adam_table(const AdamOptions& defaults) {
  return OptionTable<AdamOptions>(defaults)
      .number("lr", &AdamOptions::lr, at_least(0.0), "learning rate, scaled by the schedule")
      .number("weight_decay", &AdamOptions::weight_decay, at_least(0.0),
              "weight decay (adam: L2 added to the gradient; adamw: decoupled, param *= 1 - lr * weight_decay)")
      .numbers("betas", {{"beta1", &AdamOptions::beta1}, {"beta2", &AdamOptions::beta2}}, half_open(0.0, 1.0),
               "decay rates of the first and second moment")
      .number("eps", &AdamOptions::eps, at_least(0.0), "added to the denominator")
      .flag("amsgrad", &AdamOptions::amsgrad, "the AMSGrad variant");
}

}  // namespace

const OptionTable<AdamOptions>& AdamOptions::table() {
  static const OptionTable<AdamOptions> t = adam_table(AdamOptions{});
  return t;
}

const OptionTable<AdamOptions>& AdamWOptions::table() {
  static const OptionTable<AdamOptions> t = adam_table(AdamWOptions{});
  return t;
}

Adam::Adam(const std::vector<Tensor>& params, const AdamOptions& options)
    : Adam(single_group(params), options, false) {}

Adam::Adam(const std::vector<GroupSpec>& groups, const AdamOptions& options) : Adam(groups, options, false) {}

Adam::Adam(const std::vector<GroupSpec>& groups, const AdamOptions& options, bool decoupled)
    : Optimizer((decoupled ? AdamWOptions::table() : AdamOptions::table()).write(options)), decoupled_(decoupled) {
  size_t total = 0;
  for (const GroupSpec& g : groups) total += g.params.size();
  INGOT_CHECK_AS(total > 0, ConfigError, "{}: got an empty parameter list (does the model have parameters?)", type());
  for (const GroupSpec& g : groups) add_param_group(g);
}

void Adam::update_group(const ParamGroup& group, const std::vector<ParamState*>& states,
                        const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
  const AdamOptions o = AdamOptions::table().read(group.options);
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
  auto op = make_attr<ingot_attr_adam>();
  op.lr = o.lr;
  op.beta1 = o.beta1;
  op.beta2 = o.beta2;
  op.eps = o.eps;
  op.weight_decay = o.weight_decay;
  op.decoupled = decoupled_;
  op.amsgrad = o.amsgrad;
  for (auto& [step, b] : by_step) {
    op.step = step;
    const Tensor h = hyper(o.lr, static_cast<double>(step), b.p.front().device());
    if (h.defined()) op.lr = 0.0, op.step = 0;  // read from h: attributes that do not change between steps
    issue([b = std::move(b), op, h] { adam_update(b.p, b.g, b.m, b.v, b.vmax, op, h); });
  }
}

AdamW::AdamW(const std::vector<Tensor>& params, const AdamWOptions& options)
    : Adam(single_group(params), options, true) {}

AdamW::AdamW(const std::vector<GroupSpec>& groups, const AdamWOptions& options) : Adam(groups, options, true) {}

}  // namespace ingot::optim
