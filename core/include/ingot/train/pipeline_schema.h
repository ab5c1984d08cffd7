// The schema of a whole pipeline config (name, backend, seed, threads, smoke, data, model,
// train, stages, init_from), built from the current registries so extension types are known.
#pragma once

#include "ingot/config/schema.h"

namespace ingot::train {

/// What `ingot run` and `ingot bench` check a config against.
config::Schema pipeline_schema();

}  // namespace ingot::train
