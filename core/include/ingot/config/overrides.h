// Command-line overrides of config keys (`--set data.batch_size=512`): a dotted path and a YAML
// value, applied to the parsed file before validation.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "ingot/config/config.h"

namespace ingot::config {

/// Sets each "dotted.key=value" in `root` (the value is YAML: 64, 1e-3, true, [784, 256, 10]),
/// creating missing sections. Throws ConfigError "--set ASSIGNMENT: ..." for a malformed
/// assignment, a key `schema` does not know (suggesting the closest) or a path through a value
/// that is not a section.
void apply_overrides(YAML::Node root, const std::vector<std::string>& assignments, const Schema& schema);

/// Config::load, then apply_overrides, then validation of the result against `schema`.
Config load_with_overrides(const std::string& path, const std::vector<std::string>& assignments,
                           const Schema& schema);

}  // namespace ingot::config
