// GradScaler: dynamic loss scaling for fp16 training (torch.amp.GradScaler's semantics and
// defaults) with DeepSpeed's hysteresis and min_scale options.
//
//   loss' = scaler.scale(loss); loss'.backward();
//   bool ok = scaler.unscale_(params);  // once per step: grads *= 1/scale, checks for inf/NaN
//   (clip the gradients here, after unscaling)
//   if (ok) optimizer.step();           // else the step is skipped (and the schedule with it)
//   scaler.update(!ok);                 // grows / backs off the scale
//
// The state machine, per update(found_inf):
// - The scale is a float32 value, like torch's float32 scale tensor; each change is computed in
//   double and rounded to float32 (torch's _amp_update_scale_ kernel).
// - A clean step adds one to growth_tracker; when it reaches growth_interval the scale is
//   multiplied by growth_factor (kept only when the result is finite in float32), growth_tracker
//   goes back to 0 and hysteresis_left back to `hysteresis`.
// - An overflowing step always counts in skipped_steps and sets growth_tracker to 0. With
//   hysteresis_left > 1 it only takes one off hysteresis_left (DeepSpeed's delayed_shift);
//   otherwise the scale is multiplied by backoff_factor. hysteresis_left is refilled only when the
//   scale grows (DeepSpeed's default, consecutive_hysteresis = false): clean steps between two
//   overflows do not refill it.
// - min_scale > 0 (DeepSpeed's min_scale, raise_error_at_min_scale): a backoff lands no lower than
//   min_scale (max(scale * backoff_factor, min_scale)); a backoff due while the scale is already
//   at min_scale leaves it there and update() returns false, so the caller stops the run.
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
  double init_scale = 65536.0;     ///< 2^16
  double growth_factor = 2.0;      ///< > 1
  double backoff_factor = 0.5;     ///< in (0, 1)
  int64_t growth_interval = 2000;  ///< clean steps in a row before the scale grows
  /// DeepSpeed's delayed shift: overflowing steps (without a growth in between) before the scale
  /// backs off (1 = torch: every overflow backs off). Every overflow still skips its step.
  int64_t hysteresis = 1;
  /// The scale never goes below this; an overflow due to back off while the scale is already
  /// there stops the run (update() returns false; NonFiniteError from the trainer).
  /// 0 = no floor (torch).
  double min_scale = 0.0;
};

class GradScaler {
 public:
  /// ConfigError for options out of range (growth_factor <= 1, backoff_factor outside (0, 1),
  /// growth_interval or hysteresis < 1, init_scale not a positive float32, min_scale < 0 or above
  /// init_scale).
  explicit GradScaler(GradScalerOptions options = {});

  bool enabled() const { return options_.enabled; }
  const GradScalerOptions& options() const { return options_; }

  /// loss × scale (loss itself when disabled). Recorded by autograd like any multiply. Like
  /// torch's loss * float32 scale tensor, a float16 / bfloat16 loss gives a float32 result; a
  /// float64 loss stays float64.
  Tensor scale(const Tensor& loss) const;
  /// Multiplies every defined .grad of `params` in place by float32(1 / double(scale)) (torch's
  /// inv_scale), float16 / bfloat16 gradients in float32 arithmetic, once per step (a second
  /// call before update() throws). Returns false when any gradient held inf or NaN before the
  /// multiply (torch's found_inf: the step must be skipped), true otherwise. One value is read
  /// back from the device. Disabled: touches nothing, true.
  bool unscale_(const std::vector<Tensor>& params);
  /// Ends a step: `found_inf` = the step overflowed (was skipped). Applies growth / backoff and
  /// hysteresis (see the top of this file). Returns false when a backoff is due while the scale
  /// is already at min_scale (the caller stops the run). Disabled: does nothing, true.
  bool update(bool found_inf);

  /// The current scale (exactly the float32 value); 1 when disabled, like torch.
  double get_scale() const { return options_.enabled ? static_cast<double>(scale_) : 1.0; }
  int64_t growth_tracker() const { return growth_tracker_; }  ///< clean steps since the last change
  int64_t hysteresis_left() const { return hysteresis_left_; }
  int64_t skipped_steps() const { return skipped_steps_; }  ///< overflowed steps in all

  /// Scalars for a checkpoint ("scale", "growth_tracker", "hysteresis_left", "skipped_steps"),
  /// written with round-trip precision so a resumed run is bit-identical. Empty when disabled.
  std::map<std::string, std::string> state_dict() const;
  /// Restores a state_dict(); InputError naming the key for a missing or malformed value, or for
  /// an empty state (saved with loss scaling off). Disabled: ignores `state`, like torch.
  void load_state_dict(const std::map<std::string, std::string>& state);

 private:
  /// The scale as a float32 tensor on `device`, kept equal to scale_ in place (update() and
  /// load_state_dict() refresh it): a captured step reads the live value, never a stale copy.
  const Tensor& scale_tensor(Device device) const;

  /// The cached scale tensor; a copy of the scaler starts without one (never two scalers
  /// writing one tensor).
  struct ScaleCache {
    Tensor tensor;
    float value = 0.0f;
    ScaleCache() = default;
    ScaleCache(const ScaleCache&) {}
    ScaleCache& operator=(const ScaleCache&) {
      tensor = Tensor();
      return *this;
    }
  };

  GradScalerOptions options_;
  float scale_;
  mutable ScaleCache cache_;
  int64_t growth_tracker_ = 0;
  int64_t hysteresis_left_;
  int64_t skipped_steps_ = 0;
  bool unscaled_ = false;
};

}  // namespace ingot::amp
