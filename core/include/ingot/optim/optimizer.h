// Optimizer base (torch.optim.Optimizer): parameter groups with their hyper-parameters,
// per-parameter state, zero_grad, and a checkpoint state of tensors plus scalars.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ingot/optim/group_options.h"
#include "ingot/tensor/tensor.h"

namespace ingot::optim {

/// Parameters updated with the same hyper-parameters.
struct ParamGroup {
  std::vector<Tensor> params;
  GroupOptions options;  ///< the optimizer's options; empty = its defaults (add_param_group)
  /// The lr that schedules scale (torch's "initial_lr"); 0 when added = options.lr().
  double initial_lr = 0.0;
};

/// Parameters with overrides of the optimizer's defaults (torch's param-group dicts).
struct GroupSpec {
  std::vector<Tensor> params;
  /// Options by name ("lr", "weight_decay", ...; a flag as 0 or 1); each must be the optimizer's.
  std::map<std::string, double> options;
};

/// One group of `params` without overrides.
std::vector<GroupSpec> single_group(const std::vector<Tensor>& params);

/// An optimizer's checkpoint: tensors "state.<i>.<name>" (i = the parameter's index over all
/// groups in order, like torch) and scalars: "type", "groups", "group.<g>.params",
/// "group.<g>.initial_lr", "group.<g>.<option>" for each option the optimizer declares (flags as
/// true / false), "state.<i>.step".
struct OptimizerState {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> scalars;
};

/// Per-parameter state: named tensors (momentum buffer, moments) and the number of updates.
struct ParamState {
  std::map<std::string, Tensor> tensors;
  int64_t step = 0;
};

/// Base of SGD, Adam, AdamW and any optimizer an extension adds; it knows their options only as
/// their OptionList declares them. step() runs one update per group under NoGradGuard; parameters
/// whose grad is undefined are skipped (their state does not advance).
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// "sgd", "adam", "adamw" or an extension's type name (checked by load_state_dict).
  virtual std::string type() const = 0;
  /// The options this optimizer declares: names, defaults, ranges, docs.
  const OptionList& option_list() const { return defaults_.list(); }
  /// How many tensors of its parameter's size this optimizer keeps per parameter with its
  /// defaults, for memory estimates; every name of state_names() unless overridden.
  virtual int state_tensors_per_param() const { return static_cast<int>(state_names().size()); }

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const GroupOptions& defaults() const { return defaults_; }

  /// Adds a group; unspecified options take the optimizer's defaults. A parameter may belong to
  /// one group only.
  void add_param_group(const GroupSpec& spec);
  /// Adds a group with every option given (options of this optimizer's list), or with the
  /// defaults when group.options is empty.
  void add_param_group(ParamGroup group);

  /// One update of every parameter that has a gradient.
  void step();

  // ---- a captured step (train.compile): step() in a host half and a half of ops ------------------
  /// Whether update_group runs its updates through issue() with hyper() tensors, so that a step
  /// can be split into prepare_step() and run_updates() and the second captured as a graph (SGD,
  /// Adam and AdamW are). An extension's optimizer is not unless it does the same and says so.
  virtual bool capturable() const { return false; }
  /// The host half of step(): state made, step counts advanced, and each update's lr and step
  /// written into its hyper-parameter tensor; the updates wait for run_updates(). Updates a
  /// previous prepare_step() left waiting are dropped (a replayed graph ran them instead).
  void prepare_step();
  /// The other half: the updates prepare_step() planned, as the ops' CAPTURABLE forms, which read
  /// lr and step from the tensors, so that a replay of this call uses each step's values.
  void run_updates();
  /// Drops the updates prepare_step() planned (after a replay ran them) and the tensors they hold.
  void discard_updates() { pending_.clear(); }
  /// Changes whenever run_updates() would issue other calls: which parameters are updated
  /// together, on which state and hyper-parameter tensors (a guard key of the captured graph).
  int64_t updates_key() const { return updates_key_; }
  /// Sets every parameter's gradient to none (torch's set_to_none=True).
  void zero_grad();

  /// Tensors and scalars of the current state (tensors are shared, not copied).
  OptimizerState state_dict() const;
  /// Restores a state_dict() of an optimizer with the same groups and parameter shapes; throws
  /// InputError naming the offending key otherwise. Tensors are copied into fresh state.
  void load_state_dict(const OptimizerState& state);

  /// Moves the per-parameter state to `device` (after Module::to(device) moved the parameters;
  /// state created later follows its parameter's device anyway).
  void to(Device device);

  /// The state of parameter `index` of group `group` (empty before its first update).
  const ParamState& state(size_t group, size_t index) const { return state_.at(group).at(index); }

 protected:
  /// `defaults` are options of the optimizer's OptionList, which must have a number "lr".
  explicit Optimizer(GroupOptions defaults);

  /// Throws ConfigError for a combination of options that their ranges cannot rule out (SGD:
  /// nesterov without momentum); each option's range has been checked already.
  virtual void check_options(const GroupOptions& options) const;
  /// Names of the per-parameter state tensors this optimizer may keep.
  virtual std::vector<std::string> state_names() const = 0;
  /// Updates `params` (those of `group` that have a gradient) with `grads`; states[k] belongs to
  /// params[k]. Called under NoGradGuard, once per group with at least one gradient.
  virtual void update_group(const ParamGroup& group, const std::vector<ParamState*>& states,
                            const std::vector<Tensor>& params, const std::vector<Tensor>& grads) = 0;

  /// How update_group runs an update: at once in step(), later in run_updates() after
  /// prepare_step() (a capturable() optimizer issues every op of an update this way).
  void issue(std::function<void()> update);
  /// The float64 [lr, step] tensor on `device` for the update issued next, holding `lr` and `step`
  /// (prepare_step()); an undefined tensor in step(), whose updates read both from attributes.
  Tensor hyper(double lr, double step, Device device);

 private:
  void update_groups();

  GroupOptions defaults_;
  std::vector<ParamGroup> groups_;
  std::vector<std::vector<ParamState>> state_;  ///< [group][param]
  bool preparing_ = false;
  std::vector<std::function<void()>> pending_;  ///< prepare_step()'s updates
  std::vector<Tensor> hyper_;                   ///< hyper() tensors, reused step after step in order
  size_t hyper_used_ = 0;
  int64_t updates_key_ = 0;
};

}  // namespace ingot::optim
