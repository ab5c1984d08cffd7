// The train stage in `parallel: {mode: pipeline}`: every rank trains its part of the model with
// the GPipe schedule (parallel/pipeline_parallel.h), then the parts are gathered so every rank
// holds the whole trained model for the stages after training (evaluate, save).
#pragma once

#include "pipeline_state.h"

namespace ingot::train {

/// Trains s.model split over s.group's ranks for the configured epochs / steps; logs train_step
/// and epoch records (and an eval record per epoch with train.eval_every_epoch); the ranks agree
/// on stopping after each logged step. Returns false when the run should stop (interrupted).
bool train_pipeline_parallel(PipelineState& s);

}  // namespace ingot::train
