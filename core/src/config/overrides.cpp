// Config overrides: each assignment is checked against the root schema as far as the schema
// describes the path, then written into the tree, which is validated again as a whole.
#include "ingot/config/overrides.h"

#include <fmt/format.h>

#include "ingot/base/error.h"
#include "ingot/config/value_origin.h"

namespace ingot::config {
namespace {

std::vector<std::string> split_dots(const std::string& path) {
  std::vector<std::string> parts;
  size_t from = 0;
  for (size_t dot; (dot = path.find('.', from)) != std::string::npos; from = dot + 1)
    parts.push_back(path.substr(from, dot - from));
  parts.push_back(path.substr(from));
  return parts;
}

/// Throws for a part of `parts` that the schema (where it goes that deep) does not declare.
void check_key(const std::vector<std::string>& parts, const std::string& assignment, const Schema& root) {
  const Schema* schema = &root;
  std::string path;
  for (size_t i = 0; i < parts.size() && schema != nullptr; ++i) {
    const Field* f = schema->find(parts[i]);
    if (f == nullptr) {
      std::vector<std::string> keys;
      for (const Field& k : schema->fields()) keys.push_back(k.key);
      const std::string hint = closest_match(parts[i], keys);
      throw ConfigError(fmt::format("--set {}: unknown key '{}'{}{}", assignment, parts[i],
                                    path.empty() ? "" : " in " + path,
                                    hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
    }
    path += (path.empty() ? "" : ".") + parts[i];
    const bool last = i + 1 == parts.size();
    // (a list's elements are reached by index, model.layers.0.out: checked with the whole tree)
    if (!last && f->type != FieldType::Section && f->type != FieldType::Any && f->type != FieldType::List)
      throw ConfigError(
          fmt::format("--set {}: '{}' is {}, not a section", assignment, path, field_type_phrase(f->type)));
    schema = f->type == FieldType::Section ? f->section.get() : nullptr;
  }
}

/// The index `part` names in a list of `size` elements (size itself appends, when `append`).
size_t list_index(const std::string& part, size_t size, bool append, const std::string& assignment,
                  const std::string& path) {
  size_t index = 0;
  const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos && part.size() < 10;
  if (digits) index = static_cast<size_t>(std::stoul(part));
  if (!digits || index > size || (index == size && !append))
    throw ConfigError(fmt::format("--set {}: '{}' is a list of {} element(s): '{}' is not an index in it (0 .. {})",
                                  assignment, path, size, part, size == 0 ? 0 : size - 1));
  return index;
}

}  // namespace

void apply_overrides(YAML::Node root, const std::vector<std::string>& assignments, const Schema& schema) {
  for (const std::string& a : assignments) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
      throw ConfigError(fmt::format("--set {}: expected KEY=VALUE, e.g. --set data.batch_size=256", a));
    const std::vector<std::string> parts = split_dots(a.substr(0, eq));
    for (const std::string& p : parts)
      if (p.empty()) throw ConfigError(fmt::format("--set {}: empty key in the dotted path", a));
    check_key(parts, a, schema);
    YAML::Node value;
    try {
      value = YAML::Load(a.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      throw ConfigError(fmt::format("--set {}: the value is not valid YAML ({})", a, e.msg));
    }
    mark_command_line(value, a);  // messages about it name the assignment, not a line of the file
    // yaml-cpp: `node = other` copies into the referenced node; reset() rebinds the handle.
    YAML::Node cur;
    cur.reset(root);
    std::string path;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (cur.IsSequence()) {  // an element of a list, by index
        const size_t k = list_index(parts[i], cur.size(), false, a, path);
        path += "." + parts[i];
        YAML::Node next = cur[k];
        cur.reset(next);
        continue;
      }
      path += (path.empty() ? "" : ".") + parts[i];
      YAML::Node next = cur[parts[i]];
      if (!next.IsDefined() || next.IsNull()) {
        cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
        next.reset(cur[parts[i]]);
        mark_command_line(next, a);
      } else if (!next.IsMap() && !next.IsSequence()) {
        throw ConfigError(fmt::format("--set {}: '{}' is not a section in the config", a, path));
      }
      cur.reset(next);
    }
    if (cur.IsSequence())  // the last part indexes a list: replace an element, or append one
      cur[list_index(parts.back(), cur.size(), true, a, path)] = value;
    else
      cur[parts.back()] = value;
  }
}

Config load_with_overrides(const std::string& path, const std::vector<std::string>& assignments,
                           const Schema& schema) {
  const Config base = Config::load(path, schema);
  if (assignments.empty()) return base;
  YAML::Node root = base.root();  // shares the tree, and with it the file's line numbers
  apply_overrides(root, assignments, schema);
  return Config::from_yaml(root, path, schema);
}

}  // namespace ingot::config
