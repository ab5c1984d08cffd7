// Data-parallel training (`parallel: {mode: ddp}`), built on the trainer's seams: a callback that
// announces each backward pass to the gradient Reducer (reduce on the last micro-batch of a step,
// accumulate locally before it), waits for the averaged gradients after that backward, brings
// rank 0's buffers to every rank before each forward, and makes the ranks agree on stopping.
#pragma once

#include <memory>
#include <optional>

#include "ingot/nn/module.h"
#include "ingot/parallel/parallel_config.h"
#include "ingot/parallel/process_group.h"
#include "ingot/parallel/reducer.h"
#include "ingot/train/callback.h"

namespace ingot::train {

/// Copies rank 0's parameters and buffers to every rank (at the start, so all ranks begin equal).
void broadcast_module(const nn::Module& model, const Communicator& comm, bool buffers_only = false);

class DataParallelCallback final : public TrainCallback {
 public:
  DataParallelCallback(const parallel::ProcessGroup& group, const parallel::ParallelConfig& config);
  const char* name() const override { return "ddp"; }

  void on_step_begin(TrainState& state, const data::Batch& batch) override;
  void after_backward(TrainState& state) override;
  bool agree_to_stop(TrainState& state, bool stop) override;
  double step_loss(TrainState& state, double loss) override;

  /// The reducer of the model trained now (null before the first step).
  const parallel::Reducer* reducer() const { return reducer_.get(); }

 private:
  const parallel::ProcessGroup& group_;
  parallel::ParallelConfig config_;
  std::unique_ptr<parallel::Reducer> reducer_;
  std::optional<bool> agreed_stop_;  ///< the stop decision taken with the last step's loss
};

}  // namespace ingot::train
