// Adam (torch.optim.Adam) and AdamW (torch.optim.AdamW: decoupled weight decay), one fused
// ADAM_UPDATE per parameter group.
#pragma once

#include "ingot/optim/optimizer.h"
#include "ingot/optim/option_table.h"

namespace ingot::optim {

/// torch.optim.Adam's defaults; AdamWOptions changes weight_decay's to 1e-2 like torch.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;

  /// Each option's name, range and doc: the `adam` config keys, param-group keys and checkpoint
  /// scalars.
  static const OptionTable<AdamOptions>& table();
};
struct AdamWOptions : AdamOptions {
  AdamWOptions() { weight_decay = 1e-2; }
  explicit AdamWOptions(const AdamOptions& o) : AdamOptions(o) {}

  /// Adam's table with AdamW's defaults (the `adamw` type).
  static const OptionTable<AdamOptions>& table();
};

/// State per parameter: "exp_avg", "exp_avg_sq" (zeros at the first update), "max_exp_avg_sq"
/// with amsgrad, and the step count (bias corrections use each parameter's own count).
class Adam : public Optimizer {
 public:
  Adam(const std::vector<Tensor>& params, const AdamOptions& options = {});
  Adam(const std::vector<GroupSpec>& groups, const AdamOptions& options = {});

  std::string type() const override { return decoupled_ ? "adamw" : "adam"; }
  bool capturable() const override { return true; }
  int state_tensors_per_param() const override { return defaults().flag("amsgrad") ? 3 : 2; }

 protected:
  /// AdamW's constructor: decoupled weight decay (param *= 1 - lr * weight_decay first).
  Adam(const std::vector<GroupSpec>& groups, const AdamOptions& options, bool decoupled);

  std::vector<std::string> state_names() const override { return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}; }
  void update_group(const ParamGroup& group, const std::vector<ParamState*>& states, const std::vector<Tensor>& params,
                    const std::vector<Tensor>& grads) override;

 private:
  bool decoupled_ = false;
};

/// Adam with decoupled weight decay.
class AdamW final : public Adam {
 public:
  AdamW(const std::vector<Tensor>& params, const AdamWOptions& options = {});
  AdamW(const std::vector<GroupSpec>& groups, const AdamWOptions& options = {});
};

}  // namespace ingot::optim
