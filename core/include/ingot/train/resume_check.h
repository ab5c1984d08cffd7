// The checks a `--resume` makes against the run it continues: the config it started with
// (config.resolved.yaml: what the run computes must not change; how it runs may, and is named; a
// longer training is allowed and recomputes the schedule) and its world size.
#pragma once

#include <yaml-cpp/yaml.h>

#include <iosfwd>

#include "ingot/train/run_dir.h"

namespace ingot::train {

/// A resume must use the config the run started with: refuses (InputError naming the first changed
/// line) any change to what the run computes, but a larger train.epochs / train.steps, whose
/// schedule is then recomputed (a smaller one is refused); warns about a thread count or device that
/// differs (results then differ from an uninterrupted run) and says which runtime keys changed.
/// True when the resume extends training (the caller then rewrites the run's config).
bool check_resume_config(const RunDir& run, const YAML::Node& now, std::ostream& out);

/// A run resumes with the world size it started with (InputError saying how to relaunch).
void check_resume_world_size(const RunDir& run, int world_size);

}  // namespace ingot::train
