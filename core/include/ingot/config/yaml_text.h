// YAML as Ingot writes it (config.resolved.yaml, --print-config, comparisons of configs): numbers
// in their shortest round-trip form, 0.1 rather than yaml-cpp's 17 digits 0.10000000000000001.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace ingot::config {

/// `text` when it is a number written with 17 significant digits (how yaml-cpp encodes a double:
/// "0.10000000000000001", "0.33333333333333331"), as the shortest text that reads back as the
/// same double (fmt's "{}": "0.1", "0.3333333333333333"); any other text, integers included,
/// unchanged.
std::string shortest_number_text(const std::string& text);

/// The YAML text of `node` (not modified), every scalar passed through shortest_number_text. Every
/// writer of YAML uses it, so a value prints the same on the screen, in files and in comparisons.
std::string emit_yaml(const YAML::Node& node);

}  // namespace ingot::config
