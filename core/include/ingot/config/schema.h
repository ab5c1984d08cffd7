// Config schema: the keys a YAML section accepts, with types and ranges, so each section
// (train, data, model, ...) is declared once and checked with one clear message per problem.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingot::config {

enum class FieldType { String, Int, Float, Bool, Section, List, Any };

/// "a string", "an integer", ... for messages.
const char* field_type_phrase(FieldType t);

/// A value as quoted in an error message: at most 40 characters, non-printable bytes as \xNN.
std::string quote_value(const std::string& value);

class Schema;

/// One key of a section.
struct Field {
  std::string key;
  FieldType type = FieldType::Any;
  bool required = false;
  std::optional<double> min;            ///< Int / Float: inclusive lower bound
  std::optional<double> max;            ///< Int / Float: inclusive upper bound
  std::vector<std::string> choices;     ///< String: allowed values (empty = any)
  std::shared_ptr<const Schema> section;  ///< Section: its keys (null = any map)
  std::string help;
};

/// The keys of one YAML map. Unknown keys are errors that suggest the closest valid key.
class Schema {
 public:
  Schema& add(Field field);
  Schema& string(const std::string& key, bool required = false, std::vector<std::string> choices = {});
  Schema& integer(const std::string& key, std::optional<double> min = {}, std::optional<double> max = {},
                  bool required = false);
  Schema& number(const std::string& key, std::optional<double> min = {}, std::optional<double> max = {},
                 bool required = false);
  Schema& boolean(const std::string& key, bool required = false);
  Schema& section(const std::string& key, Schema keys, bool required = false);
  /// A map or value checked elsewhere (e.g. objects built by a registry from `type:`).
  Schema& any(const std::string& key, bool required = false);

  const Field* find(const std::string& key) const;
  const std::vector<Field>& fields() const { return fields_; }

  /// Checks `node` (a map) against this schema; throws ConfigError "FILE:LINE: ..." on the first
  /// problem. `path` is the dotted path of `node` ("" at top level).
  void validate(const YAML::Node& node, const std::string& file, const std::string& path = "") const;

 private:
  std::vector<Field> fields_;
};

/// Edit distance for "did you mean" suggestions: insertions, deletions, substitutions and swaps of two
/// neighbouring characters count one each (optimal string alignment).
size_t edit_distance(const std::string& a, const std::string& b);
/// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);
/// "FILE:LINE" of a node (1-based line), "KEY=VALUE (command line)" for a value an override set
/// (value_origin.h), or "FILE" when the node has no position.
std::string where(const std::string& file, const YAML::Node& node);

}  // namespace ingot::config
