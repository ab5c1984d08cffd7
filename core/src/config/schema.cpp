// Schema checking of YAML maps: unknown keys (with a suggestion), duplicate keys, types, ranges,
// choices and required keys, each reported as "FILE:LINE: ..." through ConfigError.
#include "ingot/config/schema.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "ingot/base/error.h"
#include "ingot/config/value_origin.h"

namespace ingot::config {
namespace {

std::string join_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::string describe(const YAML::Node& v) {
  if (!v.IsDefined() || v.IsNull()) return "nothing";
  if (v.IsMap()) return "a map";
  if (v.IsSequence()) return "a list";
  return quote_value(v.Scalar());
}

template <class T>
std::optional<T> scalar_as(const YAML::Node& v) {
  if (!v.IsScalar()) return std::nullopt;
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

std::string format_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

void check_value(const Field& f, const YAML::Node& value, const std::string& file, const std::string& key_path,
                 const std::string& at) {
  const auto type_error = [&] {
    return ConfigError(fmt::format("{}: '{}' must be {}, got {}", at, key_path, field_type_phrase(f.type), describe(value)));
  };
  std::optional<double> number;
  switch (f.type) {
    case FieldType::Any: return;
    case FieldType::String:
      if (!value.IsScalar()) throw type_error();
      if (!f.choices.empty() && std::find(f.choices.begin(), f.choices.end(), value.Scalar()) == f.choices.end()) {
        const std::string hint = closest_match(value.Scalar(), f.choices);
        throw ConfigError(fmt::format("{}: '{}' must be one of {}, got {}{}", at, key_path, fmt::join(f.choices, ", "),
                                      quote_value(value.Scalar()), hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
      }
      return;
    case FieldType::Bool:
      if (!scalar_as<bool>(value)) throw type_error();
      return;
    case FieldType::Int:
      if (auto i = scalar_as<long long>(value)) {
        number = static_cast<double>(*i);
      } else {
        throw type_error();
      }
      break;
    case FieldType::Float:
      number = scalar_as<double>(value);
      if (!number) throw type_error();
      // The one check of every float key: .nan and .inf never reach the code that uses them.
      if (!std::isfinite(*number))
        throw ConfigError(fmt::format("{}: '{}' must be a finite number, got {}", at, key_path, describe(value)));
      break;
    case FieldType::List:
      if (!value.IsSequence()) throw type_error();
      return;
    case FieldType::Section:
      if (!value.IsMap()) throw type_error();
      if (f.section) f.section->validate(value, file, key_path);
      return;
  }
  if (f.min && *number < *f.min) throw ConfigError(fmt::format("{}: '{}' must be >= {}, got {}", at, key_path, format_number(*f.min), value.Scalar()));
  if (f.max && *number > *f.max) throw ConfigError(fmt::format("{}: '{}' must be <= {}, got {}", at, key_path, format_number(*f.max), value.Scalar()));
}

}  // namespace

std::string quote_value(const std::string& value) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < value.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    out += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  return out + (value.size() > kMax ? "'..." : "'");
}

const char* field_type_phrase(FieldType t) {
  switch (t) {
    case FieldType::String: return "a string";
    case FieldType::Int: return "an integer";
    case FieldType::Float: return "a number";
    case FieldType::Bool: return "true or false";
    case FieldType::Section: return "a map";
    case FieldType::List: return "a list";
    case FieldType::Any: return "a value";
  }
  return "a value";
}

Schema& Schema::add(Field field) {
  fields_.push_back(std::move(field));
  return *this;
}

Schema& Schema::string(const std::string& key, bool required, std::vector<std::string> choices) {
  return add(Field{key, FieldType::String, required, {}, {}, std::move(choices), nullptr, ""});
}
Schema& Schema::integer(const std::string& key, std::optional<double> min, std::optional<double> max, bool required) {
  return add(Field{key, FieldType::Int, required, min, max, {}, nullptr, ""});
}
Schema& Schema::number(const std::string& key, std::optional<double> min, std::optional<double> max, bool required) {
  return add(Field{key, FieldType::Float, required, min, max, {}, nullptr, ""});
}
Schema& Schema::boolean(const std::string& key, bool required) {
  return add(Field{key, FieldType::Bool, required, {}, {}, {}, nullptr, ""});
}
Schema& Schema::section(const std::string& key, Schema keys, bool required) {
  return add(Field{key, FieldType::Section, required, {}, {}, {}, std::make_shared<const Schema>(std::move(keys)), ""});
}
Schema& Schema::any(const std::string& key, bool required) {
  return add(Field{key, FieldType::Any, required, {}, {}, {}, nullptr, ""});
}

const Field* Schema::find(const std::string& key) const {
  for (const Field& f : fields_)
    if (f.key == key) return &f;
  return nullptr;
}

void Schema::validate(const YAML::Node& node, const std::string& file, const std::string& path) const {
  const std::string in = path.empty() ? "at top level" : "in " + path;
  if (!node.IsMap()) {
    throw ConfigError(fmt::format("{}: expected a map of keys {}, got {}", where(file, node), in, describe(node)));
  }
  std::vector<std::string> valid;
  for (const Field& f : fields_) valid.push_back(f.key);
  std::map<std::string, int> seen;  // key -> 1-based line
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    const std::string at = where(file, key);
    if (!key.IsScalar()) throw ConfigError(fmt::format("{}: keys must be plain names {}", at, in));
    const std::string name = key.Scalar();
    if (auto prev = seen.find(name); prev != seen.end()) {
      throw ConfigError(fmt::format("{}: duplicate key '{}' {} (first at line {})", at, name, in, prev->second));
    }
    seen[name] = key.Mark().line + 1;
    const Field* f = find(name);
    if (f == nullptr) {
      const std::string hint = closest_match(name, valid);
      throw ConfigError(fmt::format("{}: unknown key '{}' {}; {}", at, name, in,
                                    hint.empty() ? fmt::format("valid keys: {}", fmt::join(valid, ", "))
                                                 : fmt::format("did you mean '{}'?", hint)));
    }
    check_value(*f, value, file, join_path(path, name), value.IsNull() ? at : where(file, value));
  }
  for (const Field& f : fields_) {
    if (f.required && seen.find(f.key) == seen.end()) {
      throw ConfigError(fmt::format("{}: missing required key '{}' {}", where(file, node), f.key, in));
    }
  }
}

size_t edit_distance(const std::string& a, const std::string& b) {
  // Rows i-2, i-1 and i of the table; a swap of two neighbours is one edit ("trian" -> "train").
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A likely typo: at most a third of the longer word changed (and at least one edit allowed).
  const size_t limit = std::max<size_t>(1, std::max(word.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

std::string where(const std::string& file, const YAML::Node& node) {
  if (const std::optional<std::string> assignment = command_line_origin(node))
    return fmt::format("{} (command line)", *assignment);
  const YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return file;
  return fmt::format("{}:{}", file, m.line + 1);
}

}  // namespace ingot::config
