// One parameter group's hyper-parameters: a value for each option its optimizer declares, by name
// (torch's param-group dict), so that the optimizer base needs to know no optimizer's options.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ingot/optim/option_list.h"

namespace ingot::optim {

/// Values of the options of an OptionList, at their defaults until set. Flags are 0 or 1.
class GroupOptions {
 public:
  /// No options: a ParamGroup that add_param_group gives its optimizer's defaults.
  GroupOptions();
  /// Every option of `list` at its default. `list` must outlive this: optimizers declare theirs
  /// as function-local statics (and plugins are never unloaded).
  explicit GroupOptions(const OptionList& list);

  const OptionList& list() const { return *list_; }
  bool empty() const { return values_.empty(); }

  /// Option `name` (a flag as 0 or 1); Error naming the declared options when there is none.
  double get(std::string_view name) const;
  bool flag(std::string_view name) const { return get(name) != 0.0; }
  /// Sets option `name`; ranges are checked where the group joins or reloads an optimizer (check()).
  void set(std::string_view name, double value);
  /// The learning rate, which every optimizer has (schedules set it each step).
  double lr() const { return get("lr"); }
  void set_lr(double lr) { set("lr", lr); }

  /// Option `i` in the list's order.
  double at(size_t i) const { return values_.at(i); }
  void set_at(size_t i, double value) { values_.at(i) = value; }

  /// Throws ConfigError "<who>: <option> is <value>, expected <range>" for the first value outside
  /// its declared range (a flag that is neither 0 nor 1 included).
  void check(const std::string& who) const;

 private:
  size_t index(std::string_view name) const;

  const OptionList* list_;
  std::vector<double> values_;
};

}  // namespace ingot::optim
