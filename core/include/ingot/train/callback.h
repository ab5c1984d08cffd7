// Trainer callbacks: the points of the training loop where features attach without patching the
// loop (data-parallel gradient reduction, gradual pruning masks, distillation's extra loss, loss
// scaling, logging). Callbacks run in the order they were given.
#pragma once

#include <string>

#include "ingot/data/data_loader.h"
#include "ingot/nn/module.h"
#include "ingot/optim/optimizer.h"
#include "ingot/train/checkpoint.h"

namespace ingot::train {

/// What a callback sees; the references stay valid for the whole loop.
struct TrainState {
  nn::Module& model;
  optim::Optimizer& optimizer;
  const TrainPosition& position;  ///< completed steps and batches so far
  int64_t epoch = 0;              ///< 0-based epoch in progress
  double lr = 0.0;                ///< the first group's lr of the current step
  /// Whether the micro-batch in progress is the last of its optimizer step (gradients complete
  /// after its backward: where data parallelism reduces them; earlier ones accumulate locally).
  bool last_micro_batch = true;
};

class TrainCallback {
 public:
  virtual ~TrainCallback() = default;
  virtual const char* name() const = 0;

  /// Before the forward of each micro-batch.
  virtual void on_step_begin(TrainState&, const data::Batch&) {}
  /// A term added to the loss of this micro-batch (distillation); undefined for none. `output` is
  /// the model's output, `loss` the configured loss of it.
  virtual Tensor extra_loss(TrainState&, const data::Batch&, const Tensor& /*output*/, const Tensor& /*loss*/) {
    return Tensor();
  }
  /// After each micro-batch's backward.
  virtual void after_backward(TrainState&) {}
  /// After each optimizer step: `stop` is whether this process wants to stop there (a signal
  /// arrived); returns the decision (the ranks of a distributed run decide together).
  virtual bool agree_to_stop(TrainState&, bool stop) { return stop; }
  /// After each optimizer step: the step's loss as recorded, from this process's `loss` (ranks
  /// of a distributed run record the mean over all of them).
  virtual double step_loss(TrainState&, double loss) { return loss; }
  /// Once the group's gradients are complete, before clipping and the optimizer step (gradient
  /// all-reduce, unscaling).
  virtual void before_optimizer_step(TrainState&) {}
  /// Right after the optimizer step, before the gradients are cleared (pruning masks).
  virtual void after_optimizer_step(TrainState&) {}
  /// After each finished epoch (its checkpoint and evaluation done).
  virtual void on_epoch_end(TrainState&) {}
  /// After a pipeline stage ("train", "evaluate", ...) finished.
  virtual void on_stage_end(TrainState&, const std::string& /*stage*/) {}
};

}  // namespace ingot::train
