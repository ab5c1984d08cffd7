// GroupOptions: values by name over an optimizer's OptionList, and their range check.
#include "ingot/optim/group_options.h"

#include "ingot/base/error.h"

namespace ingot::optim {

namespace {

const OptionList& no_options() {
  static const OptionList* none = new OptionList();
  return *none;
}

}  // namespace

GroupOptions::GroupOptions() : list_(&no_options()) {}

GroupOptions::GroupOptions(const OptionList& list) : list_(&list) {
  values_.reserve(list.size());
  for (const OptionSpec& s : list.specs()) values_.push_back(s.default_value);
}

size_t GroupOptions::index(std::string_view name) const {
  const size_t i = list_->find(name);
  INGOT_CHECK(i != OptionList::npos, "optimizer options: no option '{}' (options: {})", name,
              list_->size() == 0 ? "none" : list_->names());
  return i;
}

double GroupOptions::get(std::string_view name) const { return values_[index(name)]; }

void GroupOptions::set(std::string_view name, double value) { values_[index(name)] = value; }

void GroupOptions::check(const std::string& who) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    const OptionSpec& s = list_->specs()[i];
    const double v = values_[i];
    if (s.flag) {
      INGOT_CHECK_AS(v == 0.0 || v == 1.0, ConfigError, "{}: {} is {}, expected true (1) or false (0)", who,
                     list_->label(i), v);
    } else {
      INGOT_CHECK_AS(s.range.contains(v), ConfigError, "{}: {} is {}, expected {}", who, list_->label(i), v,
                     s.range.str());
    }
  }
}

}  // namespace ingot::optim
