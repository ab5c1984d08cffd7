// Where a config value came from when not from the file: the command-line assignment
// (`train.epochs=abc`, or `--set ...`) that put it into the tree, so messages can name it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace ingot::config {

/// Records that `value` and every node inside it came from `assignment` (KEY=VALUE as given).
/// The tree the value is assigned into shares the nodes, so lookups on it find the origin.
void mark_command_line(const YAML::Node& value, const std::string& assignment);

/// The assignment that set `node`, when it came from the command line.
std::optional<std::string> command_line_origin(const YAML::Node& node);

}  // namespace ingot::config
