// DataParallelCallback: the reducer follows the model the trainer runs (a stage may replace it).
#include "ingot/train/data_parallel.h"

#include <signal.h>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/runtime/profiler.h"
#include "ingot/train/interrupt.h"

namespace ingot::train {

void broadcast_module(const nn::Module& model, const Communicator& comm, bool buffers_only) {
  const NoGradGuard no_grad;
  const auto send = [&](const Tensor& t) {
    if (t.is_contiguous() && !t.is_opaque()) {
      comm.broadcast(t, 0);
    } else {  // (a layout of a backend's own: through a strided copy)
      const Tensor c = t.contiguous().clone();
      comm.broadcast(c, 0);
      t.copy_(c);
    }
  };
  if (!buffers_only)
    for (const auto& [name, p] : model.named_parameters()) send(p);
  for (const auto& [name, b] : model.named_buffers()) send(b);
}

DataParallelCallback::DataParallelCallback(const parallel::ProcessGroup& group, const parallel::ParallelConfig& config)
    : group_(group), config_(config) {}

void DataParallelCallback::on_step_begin(TrainState& state, const data::Batch&) {
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
  const bool all = group_.any(stop);
  if (all && !stop) set_interrupt(SIGINT);  // another rank got the signal: stop the same way
  return all;
}

double DataParallelCallback::step_loss(TrainState&, double loss) {
  const Tensor t = full(Shape{1}, loss, DType::F64);
  if (group_.comm().device().is_cpu()) {
    group_.comm().all_reduce(t, ReduceOp::Avg);
    return t.item();
  }
  const Tensor d = t.to(group_.comm().device());
  group_.comm().all_reduce(d, ReduceOp::Avg);
  return d.to(Device::cpu()).item();
}

}  // namespace ingot::train
