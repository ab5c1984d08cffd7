// `init_from:` — weights loaded into the model before training: a safetensors file, strict by
// default, or {path, strict: false, prefix_map, ignore} for fine-tuning from another model (torch's
// load_state_dict(strict=False) after renaming keys), saying what was loaded, missing and
// unexpected.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "ingot/config/schema.h"
#include "ingot/nn/module.h"

namespace ingot::train {

struct InitFrom {
  std::string path;
  bool strict = true;
  /// Key prefixes renamed before matching ("module." -> "": a DataParallel checkpoint), the first
  /// that matches a key wins.
  std::vector<std::pair<std::string, std::string>> prefix_map;
  /// Patterns (fnmatch: `fc.*`, `*.num_batches_tracked`) of the file's keys to leave out.
  std::vector<std::string> ignore;
};

/// The keys of the map form.
config::Schema init_from_schema();
/// `init_from:` as a string (a path, strict) or a map; ConfigError naming the key and line.
InitFrom parse_init_from(const YAML::Node& node, const std::string& file);

/// What loading did: names loaded, the model's names left as initialised, the file's names not
/// used (after renaming and ignoring).
struct InitFromReport {
  std::vector<std::string> loaded, missing, unexpected, ignored;
  /// One line: "init_from FILE: N tensors loaded; missing ...; unexpected ...".
  std::string line(const std::string& path) const;
};

/// Loads `spec` into `model`. strict: every model name present, no other (after prefix_map and
/// ignore), else InputError listing them; not strict: loads the names both have. A shape that
/// differs is always an InputError naming the tensor and both shapes.
InitFromReport load_init_from(const InitFrom& spec, nn::Module& model);

}  // namespace ingot::train
