// CallbackList: each point of the training loop, called on every callback in order.
#include "callback_list.h"

#include "ingot/ops/elementwise.h"

namespace ingot::train {

void CallbackList::step_begin(TrainState& s, const data::Batch& batch) const {
  for (TrainCallback* cb : callbacks_) cb->on_step_begin(s, batch);
}

Tensor CallbackList::with_extra_losses(TrainState& s, const data::Batch& batch, const Tensor& output,
                                       Tensor loss) const {
  for (TrainCallback* cb : callbacks_)
    if (const Tensor extra = cb->extra_loss(s, batch, output, loss); extra.defined()) loss = loss + extra;
  return loss;
}

void CallbackList::after_backward(TrainState& s) const {
  for (TrainCallback* cb : callbacks_) cb->after_backward(s);
}

void CallbackList::before_optimizer_step(TrainState& s) const {
  for (TrainCallback* cb : callbacks_) cb->before_optimizer_step(s);
}

void CallbackList::after_optimizer_step(TrainState& s) const {
  for (TrainCallback* cb : callbacks_) cb->after_optimizer_step(s);
}

double CallbackList::step_loss(TrainState& s, double loss) const {
  for (TrainCallback* cb : callbacks_) loss = cb->step_loss(s, loss);
  return loss;
}

bool CallbackList::agree_to_stop(TrainState& s, bool stop) const {
  for (TrainCallback* cb : callbacks_) stop = cb->agree_to_stop(s, stop);
  return stop;
}

void CallbackList::epoch_end(TrainState& s) const {
  for (TrainCallback* cb : callbacks_) cb->on_epoch_end(s);
}

}  // namespace ingot::train
