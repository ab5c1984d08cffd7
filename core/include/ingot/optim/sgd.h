// SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD), one fused
// SGD_UPDATE per parameter group.
#pragma once

#include "ingot/optim/optimizer.h"
#include "ingot/optim/option_table.h"

namespace ingot::optim {

/// torch.optim.SGD's hyper-parameters (torch has no default lr; 0.01 here).
struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;

  /// Each option's name, range and doc: the `sgd` config keys, param-group keys and checkpoint
  /// scalars.
  static const OptionTable<SgdOptions>& table();
};

/// Momentum buffers ("momentum_buffer") start as the first gradient (torch's first-step rule);
/// without momentum no buffer is kept.
class SGD final : public Optimizer {
 public:
  SGD(const std::vector<Tensor>& params, const SgdOptions& options = {});
  SGD(const std::vector<GroupSpec>& groups, const SgdOptions& options = {});

  std::string type() const override { return "sgd"; }
  bool capturable() const override { return true; }
  int state_tensors_per_param() const override;

 protected:
  void check_options(const GroupOptions& o) const override;
  std::vector<std::string> state_names() const override { return {"momentum_buffer"}; }
  void update_group(const ParamGroup& group, const std::vector<ParamState*>& states, const std::vector<Tensor>& params,
                    const std::vector<Tensor>& grads) override;
};

}  // namespace ingot::optim
