// What the training loop shows and records: the progress bar and the train_step and epoch records
// of metrics.jsonl, in one observer that the loop tells what happened (either output may be off).
#pragma once

#include <cstdint>
#include <string>

#include "ingot/amp/grad_scaler.h"
#include "ingot/train/trainer.h"

namespace ingot::train {

/// One optimizer step as its train_step record has it.
struct StepReport {
  int64_t epoch = 0;  ///< 1-based
  int64_t step = 0;   ///< steps done, this one included
  double loss = 0.0;
  double lr = 0.0;
  int64_t images = 0;     ///< samples of the step's micro-batches
  double seconds = 0.0;   ///< since the previous step ended
  double grad_norm = -1;  ///< before clipping; < 0 when train.clip_grad_norm is off
  int64_t skipped = 0;    ///< skip_step's skipped steps so far
  double data_seconds = 0.0;  ///< of `seconds`, waiting for the loader's batches
};

class TrainObserver {
 public:
  /// `scaler`: the enabled loss scaler, or null. All must outlive the observer.
  TrainObserver(const TrainContext& ctx, const TrainPlan& plan, int64_t log_every, const amp::GradScaler* scaler);

  void epoch_started(int64_t epoch) const;
  /// After a micro-batch's backward: the epoch's mean loss so far, the lr and the share of the
  /// epoch's time so far spent waiting for batches.
  void micro_batch_done(const data::Batch& batch, double mean_loss, double lr, double data_share) const;
  /// skip_step passed over a step; `what` says why.
  void step_skipped(const std::string& what) const;
  /// A train_step record every log_every steps and at the last step.
  void step_done(const StepReport& r) const;
  /// The epoch's progress line ends; `complete` false: it stopped after `batch` batches.
  void epoch_ended(bool complete, int64_t batch) const;
  /// The epoch record of a complete epoch (1-based `epoch`).
  void epoch_done(int64_t epoch, int64_t step, double loss, double seconds, int64_t batches, double data_seconds) const;

 private:
  const TrainContext& ctx_;
  const TrainPlan& plan_;
  int64_t log_every_;
  const amp::GradScaler* scaler_;
};

}  // namespace ingot::train
