// GradScaler: dynamic loss scaling for fp16 training (torch.amp.GradScaler's semantics and
// defaults) with DeepSpeed's hysteresis and min_scale options.
//
//   loss' = scaler.scale(loss); loss'.backward();
//   bool ok = scaler.unscale_(params);  // once per step: grads /= scale, checks for inf/NaN
//   (clip the gradients here, after unscaling)
//   if (ok) optimizer.step();           // else the step is skipped (and the schedule with it)
//   scaler.update(!ok);                 // grows / backs off the scale
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::amp {

/// `train.amp.loss_scale`; defaults are torch's.
struct GradScalerOptions {
  bool enabled = true;
  double init_scale = 65536.0;  ///< 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  ///< clean steps in a row before the scale grows
  /// DeepSpeed's delayed shift: overflowing steps in a row before the scale backs off (1 = torch:
  /// every overflow backs off). Every overflow still skips its step.
  int64_t hysteresis = 1;
  /// The scale never goes below this; an overflow that would take it lower stops the run
  /// (NonFiniteError from the trainer). 0 = no floor (torch).
  double min_scale = 0.0;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  bool enabled() const { return options_.enabled; }
  const GradScalerOptions& options() const { return options_; }

  /// loss × scale (loss itself when disabled). Recorded by autograd like any multiply.
  Tensor scale(const Tensor& loss) const;
  /// Divides every defined .grad of `params` by the scale in place, once per step (a second
  /// call before update() throws). Returns true when all of them are finite afterwards, false
  /// when any held inf or NaN (then the step must be skipped). Disabled: checks nothing, true.
  bool unscale_(const std::vector<Tensor>& params);
  /// Ends a step: `found_inf` = the step overflowed (was skipped). Applies growth / backoff and
  /// hysteresis. Returns false when backing off would take the scale below min_scale (the scale
  /// is then left at min_scale and the caller stops the run).
  bool update(bool found_inf);

  double get_scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }  ///< clean steps since the last change
  int64_t hysteresis_left() const { return hysteresis_left_; }
  int64_t skipped_steps() const { return skipped_steps_; }   ///< overflowed steps in all

  /// Scalars for a checkpoint ("scale", "growth_tracker", "hysteresis_left", "skipped_steps"),
  /// written with round-trip precision so a resumed run is bit-identical.
  std::map<std::string, std::string> state_dict() const;
  /// Restores a state_dict(); InputError naming the key for a missing or malformed value.
  void load_state_dict(const std::map<std::string, std::string>& state);

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t hysteresis_left_;
  int64_t skipped_steps_ = 0;
  bool unscaled_ = false;
};

}  // namespace ingot::amp
