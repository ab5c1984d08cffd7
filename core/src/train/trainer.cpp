// The training loop: epochs of EpochRun (micro-batches, and the optimizer step or skip of each
// accumulation group) and what follows each epoch (its record, the epoch-end hooks, the status).
#include "ingot/train/trainer.h"

#include "epoch_run.h"

namespace ingot::train {

namespace {

/// After an epoch's batches: the progress line, the epoch record and the epoch-end hooks. Returns
/// the loop's status when it ends here, nothing when training goes on. `stop`: run() asked to.
std::optional<TrainStatus> finish_epoch(LoopParts& l, EpochRun& run, bool stop, const EpochEnd& on_epoch_end) {
  const int64_t epoch = run.epoch() + 1;  // 1-based from here
  const bool complete = l.position.batch >= l.plan.batches_per_epoch;
  const double seconds = run.seconds();
  l.observer.epoch_ended(complete, l.position.batch);
  if (!complete) {
    run.stop_feeding();
    if (l.position.step < l.plan.total_steps) return TrainStatus::Interrupted;
    // A `steps:` budget ending mid-epoch.
    if (on_epoch_end) on_epoch_end(epoch, l.position, run.mean_loss());
    l.callbacks.epoch_end(l.state);
    return TrainStatus::Finished;
  }
  l.position.epoch = epoch;
  l.position.batch = 0;
  l.observer.epoch_done(epoch, l.position.step, run.mean_loss(), seconds, run.batches(), run.data_seconds());
  const bool go_on = !on_epoch_end || on_epoch_end(epoch, l.position, run.mean_loss());
  l.callbacks.epoch_end(l.state);
  if (!go_on) return TrainStatus::Finished;
  if (stop && l.position.step < l.plan.total_steps) return TrainStatus::Interrupted;
  return std::nullopt;
}

}  // namespace

TrainPlan make_train_plan(const TrainConfig& config, int64_t batches_per_epoch) {
  TrainPlan p;
  p.batches_per_epoch = batches_per_epoch;
  INGOT_CHECK_AS(batches_per_epoch > 0, InputError,
                 "training data gives no batch per epoch: lower data.batch_size or set data.drop_last: false");
  p.steps_per_epoch = (batches_per_epoch + config.accumulate - 1) / config.accumulate;
  if (config.steps > 0) {
    p.total_steps = config.steps;
    p.epochs = (config.steps + p.steps_per_epoch - 1) / p.steps_per_epoch;
  } else {
    p.epochs = config.epochs;
    p.total_steps = config.epochs * p.steps_per_epoch;
  }
  return p;
}

TrainStatus train_loop(const TrainContext& ctx, const TrainConfig& config, const TrainPlan& plan,
                       TrainPosition& position, const EpochEnd& on_epoch_end, const StepEnd& on_step_end) {
  LoopParts loop(ctx, config, plan, position, on_step_end);
  while (position.epoch < plan.epochs && position.step < plan.total_steps) {
    EpochRun run(loop, position.epoch);
    const bool stop = run.run();
    if (const std::optional<TrainStatus> status = finish_epoch(loop, run, stop, on_epoch_end)) return *status;
  }
  return TrainStatus::Finished;
}

}  // namespace ingot::train
