// The training loop: forward, loss, backward over `accumulate` micro-batches, clipping, one
// optimizer step at the schedule's lr; progress, metrics, and a callback at every epoch end.
// Stops only at whole optimizer steps, so a checkpoint taken there resumes bit-identically.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ingot/amp/grad_scaler.h"
#include "ingot/data/data_loader.h"
#include "ingot/nn/module.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer.h"
#include "ingot/train/callback.h"
#include "ingot/train/checkpoint.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/progress_bar.h"
#include "ingot/train/train_config.h"

namespace ingot::train {

/// What the loop works with; none of it is owned.
struct TrainContext {
  nn::Module* model = nullptr;
  optim::Optimizer* optimizer = nullptr;
  const optim::LrSchedule* schedule = nullptr;
  data::DataLoader* loader = nullptr;
  Generator* dropout_gen = nullptr;
  MetricsLog* metrics = nullptr;  ///< may be null
  ProgressBar* progress = nullptr;  ///< may be null
  int prefetch = 2;  ///< batches queued to the model's device ahead of use (data.prefetch)
  /// Loss scaling for fp16 (train.amp.loss_scale); null or disabled = none. Its state advances
  /// with the steps and belongs in checkpoints.
  amp::GradScaler* scaler = nullptr;
  std::vector<TrainCallback*> callbacks;  ///< run in this order at each point of the loop
  /// The pipeline stage that trains ("" for `train`): train_step and epoch records then carry it
  /// as "stage" (distillation, pruning's fine-tuning).
  std::string stage;
};

/// Sizes derived from the config and the loader.
struct TrainPlan {
  int64_t batches_per_epoch = 0;
  int64_t steps_per_epoch = 0;  ///< ceil(batches / accumulate): a short last group still steps
  int64_t total_steps = 0;
  int64_t epochs = 0;
};
TrainPlan make_train_plan(const TrainConfig& config, int64_t batches_per_epoch);

enum class TrainStatus { Finished, Interrupted, Failed };

/// Called after each finished epoch (1-based `epoch`) with the position at its end; returns
/// whether training goes on (false: stop here, finished — early stopping).
using EpochEnd = std::function<bool(int64_t epoch, const TrainPosition& position, double train_loss)>;
/// Called after each optimizer step with the position after it (a step checkpoint may be taken).
using StepEnd = std::function<void(const TrainPosition& position)>;

/// Trains from `position` (updated as steps complete) to the plan's end, or until
/// train::interrupted() is seen after a step. A non-finite loss or gradient throws NonFiniteError
/// naming the step and the quantity — the weight, when one had gone non-finite (config.on_nonfinite:
/// stop) — or skips that optimizer step (skip_step) until config.max_skipped steps in a row were
/// skipped; a non-finite weight always stops. Under train.amp each optimizer step's forward passes
/// run in one autocast region; with a loss scaler, gradients that overflowed skip the step (the
/// schedule does not advance) and back the scale off, and a scale that would fall below
/// min_scale throws NonFiniteError.
TrainStatus train_loop(const TrainContext& ctx, const TrainConfig& config, const TrainPlan& plan,
                       TrainPosition& position, const EpochEnd& on_epoch_end, const StepEnd& on_step_end = nullptr);

}  // namespace ingot::train
