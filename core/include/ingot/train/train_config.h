// The `train:` section of a pipeline config: how long to train, gradient accumulation and
// clipping, the loss, logging and checkpoint cadence, optimizer and schedule.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ingot/graph/compiled_step.h"
#include "ingot/amp/grad_scaler.h"
#include "ingot/config/schema.h"
#include "ingot/nn/loss_registry.h"
#include "ingot/tensor/dtype.h"
#include "ingot/train/early_stopping.h"

namespace ingot::train {

/// `train.amp`: mixed precision (docs/amp.md).
struct AmpConfig {
  bool enabled = false;       ///< true when `train.amp` is present (and not `enabled: false`)
  DType dtype = DType::BF16;  ///< bf16 or fp16
  /// `train.amp.loss_scale`: on by default for fp16, off for bf16 (which needs none).
  amp::GradScalerOptions scaler{.enabled = false};
};

/// `train.compile`: capture the training step and replay it optimized (docs/compile.md).
struct CompileConfig {
  bool enabled = false;
  graph::CompileOptions options;
};

struct TrainConfig {
  int64_t epochs = 1;                     ///< used when `steps` is 0
  int64_t steps = 0;                      ///< optimizer steps in all; 0 = epochs x steps per epoch
  int64_t accumulate = 1;                 ///< micro-batches per optimizer step
  std::optional<double> clip_grad_norm;   ///< max global L2 norm of the gradients
  std::optional<double> clip_grad_value;  ///< max |gradient| element
  nn::Loss loss;                          ///< `train.loss` from the loss registry (cross_entropy)
  /// A non-finite loss, gradient or weight: "stop" (exit 1, nothing saved from it) or "skip_step"
  /// (no optimizer step for that group; stop after `max_skipped` in a row).
  std::string on_nonfinite = "stop";
  int64_t max_skipped = 10;
  /// Check every op's outputs and name the first that went non-finite (AnomalyDetector).
  bool detect_anomaly = false;
  /// Refuse to start when the memory estimate exceeds what the device (or cgroup) has.
  bool memory_check = true;
  int64_t log_every = 10;                 ///< optimizer steps between train_step lines of metrics.jsonl
  int64_t checkpoint_every = 1;           ///< epochs between checkpoints (the last epoch always gets one)
  int64_t checkpoint_every_steps = 0;     ///< train.checkpoint.every_steps: a step checkpoint every N (0 = off)
  double checkpoint_every_minutes = 0.0;  ///< train.checkpoint.every_minutes: and at least this often (0 = off)
  int64_t checkpoint_keep_last = 3;       ///< checkpoint.keep_last: step checkpoints kept
  int64_t checkpoint_keep_epochs = 3;     ///< checkpoint.keep_epochs: epoch ones (0 = all)
  AmpConfig amp;                          ///< train.amp
  CompileConfig compile;                  ///< train.compile
  /// train.checkpointing.segments: recompute the model's Sequential in at most this many segments
  /// (balanced by measured activation bytes) in the backward pass instead of keeping their
  /// activations (0 = off); train.checkpointing.blocks: one segment per block instead.
  int64_t checkpointing_segments = 0;
  bool checkpointing_blocks = false;
  bool checkpointing() const { return checkpointing_segments > 0 || checkpointing_blocks; }
  bool eval_every_epoch = true;        ///< evaluate after each epoch (on validation when there is one)
  EarlyStoppingConfig early_stopping;  ///< train.early_stopping (needs a validation split)
  YAML::Node optimizer;                ///< `train.optimizer` (optim::make_optimizer)
  YAML::Node scheduler;                ///< `train.scheduler` (optim::make_schedule)
  YAML::Node callbacks;                ///< `train.callbacks` (make_callbacks)
};

/// Keys of `train:`: epochs, steps, accumulate, clip_grad_norm, clip_grad_value, loss
/// ({type: ...} or a type name; its keys are checked by the loss registry), log_every, checkpoint_every,
/// eval_every_epoch, early_stopping, optimizer, scheduler.
config::Schema train_schema();

/// Reads a validated `train:` node (undefined = the defaults with AdamW).
TrainConfig parse_train_config(const YAML::Node& node, const std::string& file);

/// Every key of `config` as a `train:` section reads it back (the loss resolved; optimizer,
/// scheduler and callbacks as given): the defaults `ingot run --print-config` shows.
YAML::Node train_config_yaml(const TrainConfig& config);

}  // namespace ingot::train
