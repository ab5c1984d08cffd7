// train.early_stopping and the best-epoch tracker.
#include "ingot/train/early_stopping.h"

#include <fmt/format.h>

#include <cmath>

namespace ingot::train {

config::Schema early_stopping_schema() {
  config::Schema s;
  s.string("metric", false, {"val_loss", "val_accuracy"})
      .integer("patience", 1, 1e9)
      .string("mode", false, {"min", "max"})
      .number("min_delta", 0.0)
      .boolean("restore_best");
  return s;
}

EarlyStoppingConfig parse_early_stopping(const YAML::Node& node) {
  EarlyStoppingConfig c;
  if (!node || node.IsNull()) return c;
  c.enabled = true;
  if (node["metric"]) c.metric = node["metric"].as<std::string>();
  if (node["patience"]) c.patience = node["patience"].as<int64_t>();
  if (node["mode"]) c.mode = node["mode"].as<std::string>();
  if (node["min_delta"]) c.min_delta = node["min_delta"].as<double>();
  if (node["restore_best"]) c.restore_best = node["restore_best"].as<bool>();
  return c;
}

ModelSelection::ModelSelection(const EarlyStoppingConfig& config)
    : metric_(config.metric),
      minimise_(config.mode.empty() ? config.metric != "val_accuracy" : config.mode == "min"),
      min_delta_(config.min_delta),
      patience_(config.patience) {}

double ModelSelection::monitored(double loss, double accuracy) const {
  return metric_ == "val_accuracy" ? accuracy : loss;
}

bool ModelSelection::update(double value, int64_t epoch) {
  // A non-finite value never improves (Lightning's check_finite stops on it; the non-finite
  // guard already stops a diverged run before this).
  const bool better = std::isfinite(value) &&
                      (!best_ || (minimise_ ? value < *best_ - min_delta_ : value > *best_ + min_delta_));
  if (better) {
    best_ = value;
    best_epoch_ = epoch;
    epochs_without_improvement_ = 0;
  } else {
    ++epochs_without_improvement_;
  }
  return better;
}

std::map<std::string, std::string> ModelSelection::state() const {
  std::map<std::string, std::string> s;
  if (best_) s["best"] = fmt::format("{:.17g}", *best_);
  s["best_epoch"] = std::to_string(best_epoch_);
  s["epochs_without_improvement"] = std::to_string(epochs_without_improvement_);
  return s;
}

void ModelSelection::restore(const std::map<std::string, std::string>& state) {
  best_.reset();
  best_epoch_ = 0;
  epochs_without_improvement_ = 0;
  if (const auto it = state.find("best"); it != state.end()) best_ = std::stod(it->second);
  if (const auto it = state.find("best_epoch"); it != state.end()) best_epoch_ = std::stoll(it->second);
  if (const auto it = state.find("epochs_without_improvement"); it != state.end())
    epochs_without_improvement_ = std::stoll(it->second);
}

}  // namespace ingot::train
