// Config: a YAML config file, parsed and checked against a schema, with typed access
// to its values and "FILE:LINE" positions for later error messages.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ingot/config/schema.h"

namespace ingot::config {

/// The largest config file read (YAML text; a bigger file is refused, not parsed).
inline constexpr uint64_t kMaxConfigBytes = uint64_t{16} << 20;

/// Reads and parses a YAML file without a schema (a run's config.resolved.yaml, say): ConfigError
/// for a missing file, a folder, a file that is not a regular one (a FIFO, /dev/zero) or is over
/// kMaxConfigBytes, and a syntax error as "FILE:LINE:COLUMN: YAML syntax error: ...".
YAML::Node load_yaml(const std::string& path);
/// The same for YAML text; `file` names it in messages.
YAML::Node parse_yaml(const std::string& text, const std::string& file);

class Config {
 public:
  /// Reads, parses and validates a file against `schema` (the pipeline's:
  /// train::pipeline_schema()); throws ConfigError for a missing file, a YAML syntax error (with
  /// line and column) or a schema violation (with line).
  static Config load(const std::string& path, const Schema& schema);
  /// Same for YAML text; `file` names it in messages.
  static Config parse(const std::string& text, const Schema& schema, const std::string& file = "<config>");
  /// Validates an already parsed tree (a file with command-line overrides applied, say).
  static Config from_yaml(YAML::Node root, const std::string& file, const Schema& schema);

  const YAML::Node& root() const { return root_; }
  const std::string& file() const { return file_; }

  std::string name() const { return get_string("name", ""); }
  /// auto | cpu | cuda | a backend or plugin name; "auto" when absent.
  std::string backend() const { return get_string("backend", "auto"); }
  std::optional<int64_t> seed() const;
  std::optional<int> threads() const;

  /// The node at a dotted path ("smoke.conv.channels"); an undefined node when absent.
  YAML::Node node(const std::string& path) const;
  bool has(const std::string& path) const;
  /// Values at a dotted path, or `fallback` when absent (types were checked by the schema).
  int64_t get_int(const std::string& path, int64_t fallback) const;
  double get_float(const std::string& path, double fallback) const;
  std::string get_string(const std::string& path, const std::string& fallback) const;
  bool get_bool(const std::string& path, bool fallback) const;
  /// "FILE:LINE" of the value at `path` (or just FILE when absent).
  std::string where(const std::string& path) const;

 private:
  Config(YAML::Node root, std::string file) : root_(std::move(root)), file_(std::move(file)) {}
  YAML::Node root_;
  std::string file_;
};

}  // namespace ingot::config
