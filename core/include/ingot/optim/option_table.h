// An optimizer's options as a C++ struct (Flashlight's optimizers keep their hyper-parameters as
// members): an OptionList whose options are members of `O`, defaults read from a default `O`, so
// that the struct, the config, param groups and checkpoints cannot drift apart.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ingot/base/error.h"
#include "ingot/optim/group_options.h"
#include "ingot/optim/option_list.h"

namespace ingot::optim {

/// Declare it once per optimizer, as a function-local static (GroupOptions point at it):
///
///     static const OptionTable<SgdOptions> t = OptionTable<SgdOptions>()
///         .number("lr", &SgdOptions::lr, at_least(0.0), "learning rate")
///         .flag("nesterov", &SgdOptions::nesterov, "Nesterov momentum");
template <class O>
class OptionTable : public OptionList {
 public:
  /// `defaults` gives each option's default (AdamW's table is Adam's with another default).
  explicit OptionTable(O defaults = O{}) : defaults_(std::move(defaults)) {}

  OptionTable& number(std::string name, double O::*member, Range range, std::string doc) {
    OptionList::number(std::move(name), defaults_.*member, range, std::move(doc));
    members_.push_back(number_member(member));
    return *this;
  }
  OptionTable& flag(std::string name, bool O::*member, std::string doc) {
    OptionList::flag(std::move(name), defaults_.*member, std::move(doc));
    members_.push_back(
        {[member](const O& o) { return o.*member ? 1.0 : 0.0; }, [member](O& o, double v) { o.*member = v != 0.0; }});
    return *this;
  }
  /// Members a config writes as one list under `key` (Adam's betas).
  OptionTable& numbers(std::string key, const std::vector<std::pair<std::string, double O::*>>& members, Range range,
                       std::string doc) {
    std::vector<std::pair<std::string, double>> defaults;
    for (const auto& [name, member] : members) defaults.emplace_back(name, defaults_.*member);
    OptionList::numbers(std::move(key), defaults, range, std::move(doc));
    for (const auto& [name, member] : members) members_.push_back(number_member(member));
    return *this;
  }

  /// The struct of a group's options (made from this table, or one with the same names).
  O read(const GroupOptions& options) const {
    INGOT_CHECK(options.list().same_names(*this), "optimizer options: got options ({}), expected ({})",
                options.list().names(), names());
    O o = defaults_;
    for (size_t i = 0; i < members_.size(); ++i) members_[i].set(o, options.at(i));
    return o;
  }
  /// `o` as a group's options of this table.
  GroupOptions write(const O& o) const {
    GroupOptions options(*this);
    for (size_t i = 0; i < members_.size(); ++i) options.set_at(i, members_[i].get(o));
    return options;
  }

 private:
  struct Member {  // a flag's value as 0 or 1
    std::function<double(const O&)> get;
    std::function<void(O&, double)> set;
  };
  static Member number_member(double O::*member) {
    return {[member](const O& o) { return o.*member; }, [member](O& o, double v) { o.*member = v; }};
  }

  O defaults_;
  std::vector<Member> members_;  ///< one per option, in the list's order
};

}  // namespace ingot::optim
