// OptionList: ranges and their wording, the declaration of an optimizer's options (each name once),
// and how messages name an option.
#include "ingot/optim/option_list.h"

#include <fmt/format.h>

#include <cmath>

#include "ingot/base/error.h"

namespace ingot::optim {

bool Range::contains(double v) const {
  if (std::isnan(v) || v < min) return false;
  return max_open ? v < max : v <= max;
}

std::string Range::str() const {
  const bool low = std::isfinite(min), high = std::isfinite(max);
  if (low && high) return fmt::format("in [{}, {}{}", min, max, max_open ? ")" : "]");
  if (low) return fmt::format(">= {}", min);
  if (high) return fmt::format("{} {}", max_open ? "<" : "<=", max);
  return "any number";
}

Range at_least(double min) { return Range{min}; }
Range closed(double min, double max) { return Range{min, max, false}; }
Range half_open(double min, double max) { return Range{min, max, true}; }

OptionList& OptionList::add(OptionSpec spec) {
  // A declaration is code, not input: a clash is the optimizer author's mistake.
  INGOT_CHECK(!spec.name.empty() && !uses(spec.name),
              "optimizer options: '{}' is empty or declared twice (options: {})", spec.name, names());
  const bool list_sibling = !specs_.empty() && spec.key != spec.name && specs_.back().key == spec.key;
  if (!list_sibling) INGOT_CHECK(!uses(spec.key), "optimizer options: config key '{}' is taken", spec.key);
  specs_.push_back(std::move(spec));
  return *this;
}

bool OptionList::uses(std::string_view key) const {
  for (const OptionSpec& s : specs_)
    if (s.key == key || s.name == key) return true;
  return false;
}

OptionList& OptionList::number(std::string name, double default_value, Range range, std::string doc) {
  std::string key = name;
  return add({std::move(name), false, default_value, range, std::move(doc), std::move(key)});
}

OptionList& OptionList::flag(std::string name, bool default_value, std::string doc) {
  std::string key = name;
  return add({std::move(name), true, default_value ? 1.0 : 0.0, Range{0.0, 1.0}, std::move(doc), std::move(key)});
}

OptionList& OptionList::numbers(std::string key, const std::vector<std::pair<std::string, double>>& names_and_defaults,
                                Range range, std::string doc) {
  INGOT_CHECK(names_and_defaults.size() >= 2, "optimizer options: list key '{}' needs at least two options", key);
  INGOT_CHECK(!uses(key), "optimizer options: config key '{}' is taken", key);
  for (const auto& [name, value] : names_and_defaults) add({name, false, value, range, doc, key});
  return *this;
}

size_t OptionList::find(std::string_view name) const {
  for (size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].name == name) return i;
  return npos;
}

std::string OptionList::names() const {
  std::string out;
  for (const OptionSpec& s : specs_) out += (out.empty() ? "" : ", ") + s.name;
  return out;
}

std::string OptionList::label(size_t i) const {
  const OptionSpec& s = specs_.at(i);
  if (s.key == s.name) return s.name;
  size_t first = i;
  while (first > 0 && specs_[first - 1].key == s.key) --first;
  return fmt::format("{}[{}] ({})", s.key, i - first, s.name);
}

bool OptionList::same_names(const OptionList& other) const {
  if (&other == this) return true;
  if (other.size() != size()) return false;
  for (size_t i = 0; i < size(); ++i)
    if (other.specs_[i].name != specs_[i].name) return false;
  return true;
}

}  // namespace ingot::optim
