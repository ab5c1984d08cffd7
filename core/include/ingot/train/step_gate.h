// StepGate: whether an accumulation group's gradients may take their optimizer step — the loss
// scaler's overflow check, then a non-finite loss, gradient or weight under train.on_nonfinite
// (stop, or skip_step up to train.max_skipped in a row) — as one decision that says what happened.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/amp/grad_scaler.h"
#include "ingot/nn/module.h"
#include "ingot/train/anomaly_detector.h"
#include "ingot/train/nonfinite_guard.h"
#include "ingot/train/train_config.h"

namespace ingot::train {

enum class StepOutcome {
  Step,           ///< take the optimizer step
  Overflow,       ///< the scaled gradients overflowed: no step, the scale has backed off
  SkipNonFinite,  ///< skip_step: no step for a non-finite loss or gradient
};

struct StepDecision {
  StepOutcome outcome = StepOutcome::Step;
  std::string what;  ///< SkipNonFinite: "step N: the loss (NaN) is not finite ..."
};

class StepGate {
 public:
  /// `scaler`: the enabled loss scaler, or null; `anomaly`: train.detect_anomaly's detector, or
  /// null. Both must outlive the gate.
  StepGate(const TrainConfig& config, nn::Module& model, amp::GradScaler* scaler, const AnomalyDetector* anomaly);

  /// Decides the group's step `step` (1-based) after its backward passes; `nonfinite_loss` is its
  /// first non-finite loss ("the loss (NaN)", "" when all were finite). With a scaler this
  /// unscales the gradients and updates the scale on a skip. Throws NonFiniteError where the run
  /// stops: on_nonfinite stop, a weight gone non-finite, max_skipped steps skipped in a row, or an
  /// overflow at the smallest scale allowed. A step that is fine costs one gradient norm.
  StepDecision decide(int64_t step, std::string nonfinite_loss);

  /// Steps skipped for non-finite values so far (skip_step).
  int64_t skipped() const { return skipped_; }

 private:
  /// "step N: <what> is not finite", with what anomaly detection saw.
  std::string describe(int64_t step, const std::string& what) const;

  NonFiniteGuard guard_;
  std::vector<Tensor> params_;
  amp::GradScaler* scaler_;
  const AnomalyDetector* anomaly_;
  bool skip_;
  int64_t max_skipped_;
  int64_t skipped_ = 0, skipped_in_row_ = 0;
};

}  // namespace ingot::train
