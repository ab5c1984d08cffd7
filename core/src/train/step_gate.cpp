// StepGate: the optimizer-step decision of each accumulation group (loss-scaler overflow,
// non-finite losses, gradients and weights, skip_step's counts).
#include "ingot/train/step_gate.h"

#include <fmt/format.h>

#include "ingot/base/error.h"

namespace ingot::train {

StepGate::StepGate(const TrainConfig& config, nn::Module& model, amp::GradScaler* scaler,
                   const AnomalyDetector* anomaly)
    : guard_(model.named_parameters()),
      params_(model.parameters()),
      scaler_(scaler),
      anomaly_(anomaly),
      skip_(config.on_nonfinite == "skip_step"),
      max_skipped_(config.max_skipped) {}

StepDecision StepGate::decide(int64_t step, std::string nonfinite) {
  // Loss scaling: unscale once; overflowed gradients (with a finite loss) skip the step.
  if (scaler_ != nullptr && nonfinite.empty() && !scaler_->unscale_(params_)) {
    const double was = scaler_->get_scale();
    if (!scaler_->update(true))
      throw NonFiniteError(
          fmt::format("step {}: the gradients are not finite at the smallest loss scale allowed ({} = "
                      "train.amp.loss_scale.min_scale)",
                      step, was));
    return {StepOutcome::Overflow, ""};
  }
  // Weights are checked only when a loss went non-finite (a weight that did is the cause to
  // name) and before anything is saved: a step that is fine costs one gradient norm.
  bool weights_bad = false;
  if (!nonfinite.empty()) {
    if (std::string w = guard_.check_weights(); !w.empty()) nonfinite = std::move(w), weights_bad = true;
  } else if (scaler_ == nullptr) {  // (unscale_ has checked them)
    nonfinite = guard_.check_gradients();
  }
  if (nonfinite.empty()) {
    skipped_in_row_ = 0;
    return {StepOutcome::Step, ""};
  }
  std::string what = describe(step, nonfinite);
  if (!skip_ || weights_bad) throw NonFiniteError(what);
  // skip_step: no update from this group.
  if (scaler_ != nullptr) scaler_->update(true);
  ++skipped_;
  if (++skipped_in_row_ >= max_skipped_)
    throw NonFiniteError(fmt::format("{}, and that made {} steps in a row skipped (train.max_skipped: {})", what,
                                     skipped_in_row_, max_skipped_));
  return {StepOutcome::SkipNonFinite, std::move(what)};
}

std::string StepGate::describe(int64_t step, const std::string& what) const {
  std::string text = fmt::format("step {}: {} is not finite", step, what);
  if (anomaly_ != nullptr) {
    const std::string first = anomaly_->first();
    text += first.empty() ? " (anomaly detection saw no op output go non-finite)"
                          : fmt::format(" (anomaly detection: {})", first);
  }
  return text;
}

}  // namespace ingot::train
