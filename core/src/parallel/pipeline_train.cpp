// The training and evaluation loops of pipeline parallelism over a DataLoader.
#include "ingot/parallel/pipeline_train.h"

#include "ingot/base/grad_mode.h"
#include "ingot/nn/loss.h"
#include "ingot/optim/clip_grad.h"

namespace ingot::parallel {

std::vector<double> run_pipeline_parallel_epoch(PipelineParallel& pipeline, data::DataLoader& loader, int64_t epoch,
                                                optim::Optimizer* optimizer, const optim::LrSchedule& schedule,
                                                const PipelineLossFn& loss_fn, const PipelineTrainOptions& options) {
  pipeline.train(true);
  loader.begin_epoch(epoch, options.start_batch);
  std::vector<double> losses;
  while (options.max_steps < 0 || static_cast<int64_t>(losses.size()) < options.max_steps) {
    const std::optional<data::Batch> batch = loader.next();
    if (!batch) break;
    const int64_t step = options.first_step + static_cast<int64_t>(losses.size());
    if (optimizer != nullptr) {
      for (optim::ParamGroup& g : optimizer->param_groups()) g.options.set_lr(schedule.lr(step, g.initial_lr));
      optimizer->zero_grad();
    }
    losses.push_back(pipeline.train_step(batch->inputs, batch->targets, loss_fn, options.micro_batches));
    if (options.clip_grad_norm > 0.0) pipeline.clip_grad_norm(options.clip_grad_norm);
    if (options.clip_grad_value > 0.0) optim::clip_grad_value_(pipeline.parameters(), options.clip_grad_value);
    if (optimizer != nullptr) optimizer->step();
  }
  if (options.max_steps >= 0) loader.stop();
  return losses;
}

PipelineEvaluation evaluate_pipeline_parallel(PipelineParallel& pipeline, data::DataLoader& loader,
                                              const PipelineLossFn& loss_fn) {
  const bool was_training = pipeline.stage().is_training();
  pipeline.train(false);
  const NoGradGuard no_grad;
  loader.begin_epoch(0);
  double loss_sum = 0.0;
  int64_t correct = 0;
  PipelineEvaluation out;
  while (const std::optional<data::Batch> batch = loader.next()) {
    const Tensor logits = pipeline.forward(batch->inputs);
    const Tensor targets = batch->targets.to(logits.device());
    const int64_t n = targets.size(0);
    loss_sum += loss_fn(logits, targets).item() * static_cast<double>(n);
    correct += nn::accuracy_count(logits, targets);
    out.samples += n;
  }
  pipeline.train(was_training);
  if (out.samples > 0) {
    out.loss = loss_sum / static_cast<double>(out.samples);
    out.accuracy = static_cast<double>(correct) / static_cast<double>(out.samples);
  }
  return out;
}

}  // namespace ingot::parallel
