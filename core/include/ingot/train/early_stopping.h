// Model selection on the validation split: the best epoch by a metric (checkpoints/best.safetensors)
// and early stopping after `patience` epochs without improvement — torch Lightning's
// ModelCheckpoint(monitor=...) and EarlyStopping(monitor, patience, mode, min_delta).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ingot/config/schema.h"

namespace ingot::train {

/// `train.early_stopping: {metric, patience, mode, min_delta, restore_best}`.
struct EarlyStoppingConfig {
  bool enabled = false;             ///< the section is present
  std::string metric = "val_loss";  ///< val_loss | val_accuracy: also what best.safetensors follows
  int64_t patience = 3;             ///< epochs without improvement before training stops
  std::string mode;                 ///< min | max; "" = min for val_loss, max for val_accuracy
  double min_delta = 0.0;           ///< an improvement must exceed this
  /// Load the best epoch's weights after training stops, so `evaluate` and `save` see them
  /// (Lightning's trainer.test(ckpt_path="best")).
  bool restore_best = true;
};

config::Schema early_stopping_schema();
/// Reads a validated `train.early_stopping` node (undefined: disabled).
EarlyStoppingConfig parse_early_stopping(const YAML::Node& node);

/// The best value so far of the monitored metric and the epochs since it improved. Its state
/// travels in checkpoints (`state()` / `restore()`), so a resumed run stops where an
/// uninterrupted one would.
class ModelSelection {
 public:
  /// `metric` / `mode` / `min_delta` / `patience` as in EarlyStoppingConfig (also used without
  /// early stopping, with its defaults, to pick best.safetensors).
  explicit ModelSelection(const EarlyStoppingConfig& config);

  /// The monitored value from a validation loss and accuracy.
  double monitored(double loss, double accuracy) const;
  /// Records epoch `epoch`'s value; true when it is the best so far (by more than min_delta).
  bool update(double value, int64_t epoch);
  /// Whether `patience` epochs in a row did not improve (only meaningful with early stopping).
  bool exhausted() const { return epochs_without_improvement_ >= patience_; }

  const std::string& metric() const { return metric_; }
  bool minimises() const { return minimise_; }
  std::optional<double> best() const { return best_; }
  int64_t best_epoch() const { return best_epoch_; }
  int64_t epochs_without_improvement() const { return epochs_without_improvement_; }

  /// String state for checkpoint metadata, and back (missing keys: a fresh start; a value that is
  /// not a number: InputError, and nothing changes).
  std::map<std::string, std::string> state() const;
  void restore(const std::map<std::string, std::string>& state);

 private:
  std::string metric_;
  bool minimise_;
  double min_delta_;
  int64_t patience_;
  std::optional<double> best_;
  int64_t best_epoch_ = 0;
  int64_t epochs_without_improvement_ = 0;
};

}  // namespace ingot::train
