// The training and evaluation loops of pipeline parallelism: every rank iterates the same
// batches (same loader seed); rank 0 uses the inputs, the last rank the targets, and each rank
// steps its own optimizer over its own stage's parameters.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/data/data_loader.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer.h"
#include "ingot/parallel/pipeline_parallel.h"

namespace ingot::parallel {

struct PipelineTrainOptions {
  int64_t micro_batches = 1;  ///< parallel.micro_batches
  int64_t first_step = 0;     ///< optimizer steps taken before this call: where the schedule stands
  int64_t start_batch = 0;    ///< the epoch's first batch (a resumed epoch skips the ones before)
  int64_t max_steps = -1;     ///< stop after this many steps; negative: at the end of the epoch
  /// train.clip_grad_norm: > 0 clips by the norm over every stage (PipelineParallel::clip_grad_norm)
  double clip_grad_norm = 0.0;
  /// train.clip_grad_value: > 0 clamps every gradient element (needs no other rank)
  double clip_grad_value = 0.0;
};

/// Trains epoch `epoch` of `loader` (begun here at options.start_batch): per batch, every group's
/// lr = schedule.lr(step, initial_lr), zero_grad, PipelineParallel::train_step, the clipping
/// asked for, optimizer.step().
/// `optimizer` holds this stage's parameters (pipeline.parameters()); null for a stage without
/// any (only activations or pooling), which still takes part in every step. Logs nothing; returns
/// the loss of every step, the same on every rank. Every rank must call it with the same loader
/// options and options.
std::vector<double> run_pipeline_parallel_epoch(PipelineParallel& pipeline, data::DataLoader& loader, int64_t epoch,
                                                optim::Optimizer* optimizer, const optim::LrSchedule& schedule,
                                                const PipelineLossFn& loss_fn, const PipelineTrainOptions& options);

/// Mean loss and accuracy (argmax over dim 1 against class-index targets) of a whole evaluation.
struct PipelineEvaluation {
  double loss = 0.0;
  double accuracy = 0.0;
  int64_t samples = 0;
};

/// Evaluates `pipeline` in eval mode over one pass of `loader` (epoch 0), every batch through
/// PipelineParallel::forward; the result is the same on every rank, which must all call it.
/// Restores the stage's mode after.
PipelineEvaluation evaluate_pipeline_parallel(PipelineParallel& pipeline, data::DataLoader& loader,
                                              const PipelineLossFn& loss_fn);

}  // namespace ingot::parallel
