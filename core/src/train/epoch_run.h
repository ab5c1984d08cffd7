// One epoch of train_loop: the running sums of the epoch and of the accumulation group in
// progress, each micro-batch's forward and backward, and the group's end — its optimizer step, or
// a skipped group — with the callbacks, the step decision and the observer around them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "callback_list.h"
#include "compiled_updates.h"
#include "ingot/amp/autocast.h"
#include "ingot/graph/compiled_step.h"
#include "ingot/runtime/profiler.h"
#include "ingot/train/anomaly_detector.h"
#include "ingot/train/device_feeder.h"
#include "ingot/train/step_gate.h"
#include "ingot/train/trainer.h"
#include "train_observer.h"

namespace ingot::train {

/// What every epoch of one train_loop call shares.
struct LoopParts {
  LoopParts(const TrainContext& ctx, const TrainConfig& config, const TrainPlan& plan, TrainPosition& position,
            const StepEnd& on_step_end);
  /// Logs what train.compile did (steps replayed, captured, run eager and why).
  ~LoopParts();
  LoopParts(const LoopParts&) = delete;
  LoopParts& operator=(const LoopParts&) = delete;

  const TrainContext& ctx;
  const TrainConfig& config;
  const TrainPlan& plan;
  TrainPosition& position;
  const StepEnd& on_step_end;
  nn::Module& model;
  optim::Optimizer& opt;
  const std::vector<Tensor> params;
  TrainState state;
  CallbackList callbacks;
  std::unique_ptr<AnomalyDetector> anomaly;  ///< train.detect_anomaly, or null
  amp::GradScaler* scaler;                   ///< the enabled loss scaler, or null
  StepGate gate;
  TrainObserver observer;
  /// One autocast region per optimizer step: each weight is cast once for all its micro-batches,
  /// and the region ends before the optimizer changes the weights.
  std::optional<amp::AutocastRegion> autocast;
  /// train.compile: the micro-batch's forward and backward, captured and replayed; or null.
  std::unique_ptr<graph::CompiledStep> compiled;
  /// train.compile: the optimizer step, captured and replayed; null when not compiled or when the
  /// optimizer's step cannot be captured (then optimizer.step()).
  std::unique_ptr<CompiledUpdates> compiled_updates;
};

class EpochRun {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts epoch `epoch` (0-based) at position.batch: the loader, the device feeder, the
  /// progress line, train mode, no gradients.
  EpochRun(LoopParts& loop, int64_t epoch);

  /// Trains on the epoch's batches; returns true when the loop is to stop after the step just
  /// taken or skipped (an agreed stop, or the step budget spent), false at the epoch's end.
  bool run();
  /// Drops the batches queued ahead and stops the loader (an epoch left before its end).
  void stop_feeding();

  int64_t epoch() const { return epoch_; }
  /// The mean of the epoch's finite losses so far.
  double mean_loss() const { return shown_loss_; }
  int64_t batches() const { return epoch_batches_; }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - epoch_start_).count(); }
  /// Seconds of this epoch spent waiting for the next batch (the loader's workers had none ready).
  double data_seconds() const { return epoch_data_s_; }

 private:
  /// Forward, loss (with the callbacks' extra terms) and backward of one micro-batch.
  void micro_batch(const data::Batch& batch);
  /// Counts a micro-batch and its loss `value` into the group and the epoch.
  void count(const data::Batch& batch, double value);
  /// The group that `last` ends: its step or its skip. True: stop.
  bool finish_group(const data::Batch& last);
  /// The optimizer step over the group's gradients, then its record. True: stop.
  bool step(const data::Batch& last, ProfileScope& phase);
  /// A group without a step: its gradients are dropped, its batches count as consumed, the step
  /// count and the schedule stay. True: stop.
  bool skip_group(const data::Batch& last);
  /// The batches up to `last` are consumed (by a step or a skip).
  void consume(const data::Batch& last);
  /// Empties the group's sums for the next group.
  void reset_group();

  LoopParts& loop_;
  const int64_t epoch_;
  DeviceFeeder feeder_;
  Clock::time_point epoch_start_, step_start_;
  double epoch_loss_ = 0.0, group_loss_ = 0.0, shown_loss_ = 0.0;
  int64_t epoch_batches_ = 0, finite_batches_ = 0, micro_ = 0, group_images_ = 0;
  double lr_ = 0.0;        ///< the step's lr (the schedule at position.step)
  double data_s_ = 0.0, epoch_data_s_ = 0.0;  ///< waiting for batches: this step's, this epoch's
  std::string nonfinite_;  ///< the group's first non-finite loss
};

}  // namespace ingot::train
