// DataParallelCallback: the reducer follows the model the trainer runs (a stage may replace it).
#include "ingot/train/data_parallel.h"

#include <signal.h>

#include <map>
#include <vector>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/indexing.h"
#include "ingot/runtime/profiler.h"
#include "ingot/train/interrupt.h"

namespace ingot::train {

void broadcast_module(const nn::Module& model, const Communicator& comm, bool buffers_only) {
  const NoGradGuard no_grad;
  std::vector<Tensor> tensors;
  if (!buffers_only)
    for (const auto& [name, p] : model.named_parameters()) tensors.push_back(p);
  for (const auto& [name, b] : model.named_buffers()) tensors.push_back(b);
  // One broadcast per dtype (torch coalesces the same way): the tensors flattened side by side.
  std::map<DType, std::vector<Tensor>> by_dtype;
  for (const Tensor& t : tensors) by_dtype[t.dtype()].push_back(t);
  for (const auto& [dtype, group] : by_dtype) {
    std::vector<Tensor> flat;
    for (const Tensor& t : group) flat.push_back(t.reshape(Shape{t.numel()}));
    const Tensor packed = group.size() == 1 ? flat.front().contiguous().clone() : concat(flat, 0);
    comm.broadcast(packed, 0);
    if (comm.rank() == 0) continue;
    int64_t at = 0;
    for (const Tensor& t : group) {
      t.copy_(packed.slice(0, at, at + t.numel()).view(t.shape()));
      at += t.numel();
    }
  }
}

DataParallelCallback::DataParallelCallback(const parallel::ProcessGroup& group, const parallel::ParallelConfig& config)
    : group_(group), config_(config) {}

void DataParallelCallback::on_step_begin(TrainState& state, const data::Batch&) {
  agreed_stop_.reset();  // (a decision the trainer did not ask for: the run's last step)
  const auto params = state.model.named_parameters();
  if (!reducer_ || !reducer_->watches(params)) {
    // First step, or a stage replaced the model: start from rank 0's weights and hook these.
    reducer_.reset();
    broadcast_module(state.model, group_.comm());
    reducer_ = std::make_unique<parallel::Reducer>(
        params, group_.comm(),
        // SyncBatchNorm's backward all-reduces on this thread: the buckets then reduce here too,
        // in backward's order (one thread per communicator keeps the ranks' collectives paired).
        parallel::ReducerOptions{.bucket_mb = config_.bucket_mb,
                                 .find_unused_parameters = config_.find_unused_parameters,
                                 .overlap = !config_.sync_batchnorm});
  } else if (config_.broadcast_buffers) {
    const ProfileScope scope("ddp: broadcast buffers", "ddp");
    broadcast_module(state.model, group_.comm(), /*buffers_only=*/true);
  }
  reducer_->prepare_for_backward(state.last_micro_batch);
}

void DataParallelCallback::after_backward(TrainState&) { reducer_->finalize(); }

bool DataParallelCallback::agree_to_stop(TrainState&, bool stop) {
  bool all;
  if (agreed_stop_) {  // decided with the step's loss (one collective for both)
    all = *agreed_stop_;
    agreed_stop_.reset();
  } else {
    all = group_.any(stop);
  }
  if (all && !interrupted()) set_interrupt(SIGINT);  // another rank got the signal: stop the same way
  return all;
}

double DataParallelCallback::step_loss(TrainState&, double loss) {
  // [loss, stop flag] averaged: the mean loss, and whether any rank wants to stop (the trainer
  // asks agree_to_stop right after; the answer is this one).
  const Tensor t = Tensor::from_vector(std::vector<double>{loss, interrupted() ? 1.0 : 0.0}, Shape{2});
  const Tensor d = t.to(group_.comm().device());
  group_.comm().all_reduce(d, ReduceOp::Avg);
  const std::vector<double> v = d.to(Device::cpu()).to_vector<double>();
  agreed_stop_ = v[1] > 0.0;
  return v[0];
}

}  // namespace ingot::train
