// The trainer's callbacks in their order, one call per point of the training loop (callback.h says
// when each point is reached), so that the loop names the point instead of looping over callbacks.
#pragma once

#include <utility>
#include <vector>

#include "ingot/train/callback.h"

namespace ingot::train {

class CallbackList {
 public:
  explicit CallbackList(std::vector<TrainCallback*> callbacks) : callbacks_(std::move(callbacks)) {}

  void step_begin(TrainState& s, const data::Batch& batch) const;
  /// `loss` with each callback's extra term added in turn (each sees the sum so far).
  Tensor with_extra_losses(TrainState& s, const data::Batch& batch, const Tensor& output, Tensor loss) const;
  void after_backward(TrainState& s) const;
  void before_optimizer_step(TrainState& s) const;
  void after_optimizer_step(TrainState& s) const;
  /// The step's loss as each callback passes it on (the ranks' mean in a distributed run).
  double step_loss(TrainState& s, double loss) const;
  /// Whether to stop after this step, from this process's wish `stop` (ranks decide together).
  bool agree_to_stop(TrainState& s, bool stop) const;
  void epoch_end(TrainState& s) const;

 private:
  std::vector<TrainCallback*> callbacks_;
};

}  // namespace ingot::train
