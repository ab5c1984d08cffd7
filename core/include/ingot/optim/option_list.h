// An optimizer's hyper-parameters, declared once: each option's name, default, valid range and doc.
// Its config keys, param-group values, checkpoint scalars and resolved config all come from this.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ingot::optim {

/// The numbers an option accepts: [min, max], or [min, max) when max_open.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool max_open = false;

  /// Whether `v` lies in the range (NaN never does).
  bool contains(double v) const;
  /// ">= 0", "in [0, 1]", "in [0, 1)" or "any number", for messages and listings.
  std::string str() const;
};
/// [min, inf)
Range at_least(double min);
/// [min, max]
Range closed(double min, double max);
/// [min, max)
Range half_open(double min, double max);

/// One option of an optimizer.
struct OptionSpec {
  std::string name;            ///< param-group key and checkpoint scalar "group.<g>.<name>"
  bool flag = false;           ///< true / false rather than a number
  double default_value = 0.0;  ///< a flag's is 0 or 1
  Range range;                 ///< numbers only
  std::string doc;             ///< one line
  std::string key;             ///< config key: `name`, or a list key several options share ("betas")
};

/// The options of one optimizer type, in the order its config and resolved config list them.
/// Every optimizer has a number "lr" (the learning rate that schedules scale).
class OptionList {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  OptionList& number(std::string name, double default_value, Range range, std::string doc);
  OptionList& flag(std::string name, bool default_value, std::string doc);
  /// Numbers that a config writes as one list `key: [a, b, ...]` (Adam's betas: beta1, beta2),
  /// each in `range`.
  OptionList& numbers(std::string key, const std::vector<std::pair<std::string, double>>& names_and_defaults,
                      Range range, std::string doc);

  const std::vector<OptionSpec>& specs() const { return specs_; }
  size_t size() const { return specs_.size(); }
  /// The index of option `name`, or npos.
  size_t find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != npos; }
  /// "lr, weight_decay, ...", for messages.
  std::string names() const;
  /// How messages name option `i`: "lr", or "betas[1] (beta2)" for an option of a list key.
  std::string label(size_t i) const;
  /// Whether `other` has the same option names in the same order (Adam's and AdamW's lists differ
  /// in a default only, so their groups fit each other).
  bool same_names(const OptionList& other) const;

 private:
  OptionList& add(OptionSpec spec);
  /// Whether a declared option has `key` as its name or config key.
  bool uses(std::string_view key) const;

  std::vector<OptionSpec> specs_;
};

}  // namespace ingot::optim
