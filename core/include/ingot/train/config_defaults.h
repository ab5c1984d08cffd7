// A pipeline config with the defaults a run fills in before it sees any data: what
// `ingot run CONFIG --print-config` prints.
#pragma once

#include <yaml-cpp/yaml.h>

#include "ingot/config/config.h"

namespace ingot::train {

/// `cfg`'s tree with every default of `data:`, of the model's preset and of `train:` filled in
/// (the loss and the optimizer with their types' defaults; the schedule as written, since its
/// resolved lengths follow the data). Sections the config does not have stay absent. Throws the
/// ConfigError a run would for a bad section.
YAML::Node config_with_defaults(const config::Config& cfg);

}  // namespace ingot::train
