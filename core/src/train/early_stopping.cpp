// train.early_stopping and the best-epoch tracker.
#include "ingot/train/early_stopping.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "ingot/base/error.h"
#include "ingot/base/input_file.h"

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

namespace {

/// The value of `key` parsed whole as T; `fallback` when absent, InputError when it is not a
/// number (every field is parsed before any is set).
template <class T>
T state_number(const std::map<std::string, std::string>& state, const char* key, T fallback) {
  const auto it = state.find(key);
  if (it == state.end()) return fallback;
  T value{};
  const char* end = it->second.data() + it->second.size();
  const auto [ptr, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || ptr != end)
    throw InputError(fmt::format("best-epoch state: '{}' is not a number: '{}'", key, printable(it->second)));
  return value;
}

}  // namespace

void ModelSelection::restore(const std::map<std::string, std::string>& state) {
  const double best = state_number(state, "best", std::nan(""));
  const int64_t best_epoch = state_number<int64_t>(state, "best_epoch", 0);
  const int64_t without = state_number<int64_t>(state, "epochs_without_improvement", 0);
  best_.reset();
  if (state.contains("best")) best_ = best;
  best_epoch_ = best_epoch;
  epochs_without_improvement_ = without;
}

}  // namespace ingot::train
