// Pipeline-parallel training inside `ingot run`: chunks of log_every steps between agreements to
// stop, the records rank 0 logs, and the gathering of the trained parts.
#include "pipeline_parallel_train.h"

#include <fmt/format.h>
#include <signal.h>

#include <chrono>

#include "ingot/base/grad_mode.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/parallel/pipeline_parallel.h"
#include "ingot/parallel/pipeline_train.h"
#include "ingot/train/interrupt.h"

namespace ingot::train {

namespace {

/// Every parameter and buffer of the model from the rank whose stage holds its layer.
void gather_stages(nn::Module& model, const Communicator& comm, const std::vector<int64_t>& owner_of_layer) {
  const NoGradGuard no_grad;
  const auto share = [&](const nn::NamedTensors& tensors) {
    for (const auto& [name, t] : tensors) {
      const int64_t layer = std::stoll(name.substr(0, name.find('.')));
      comm.broadcast(t, static_cast<int>(owner_of_layer[static_cast<size_t>(layer)]));
    }
  };
  share(model.named_parameters());
  share(model.named_buffers());
}

}  // namespace

bool train_pipeline_parallel(PipelineState& s) {
  InterruptGuard guard("\ningot: stopping after the current steps (Ctrl-C again stops now)\n");
  const Communicator& comm = s.group->comm();
  parallel::PipelineParallel pipe(s.model, s.parallel.stages, comm);
  // The stage's own optimizer (none for a stage without parameters), the schedule's lr per step.
  std::unique_ptr<optim::Optimizer> opt;
  if (!pipe.parameters().empty()) opt = optim::make_optimizer(s.train.optimizer, pipe.named_parameters(), s.cfg.file());
  std::vector<int64_t> owner;  // the rank of each top-level layer
  const auto bounds = parallel::pipeline_bounds(s.parallel.stages, static_cast<int64_t>(s.model->children().size()),
                                                s.group->world_size(), "parallel.stages");
  for (int r = 0; r + 1 < static_cast<int>(bounds.size()); ++r)
    for (int64_t l = bounds[r]; l < bounds[r + 1]; ++l) owner.push_back(r);
  s.out << fmt::format("parallel: pipeline stage {} of {} holds layers [{}, {}) ({} parameters), {} micro-batches\n",
                       pipe.stage_index() + 1, pipe.num_stages(), pipe.first_layer(), pipe.end_layer(),
                       pipe.parameters().empty() ? 0 : [&] {
                         int64_t n = 0;
                         for (const Tensor& p : pipe.parameters()) n += p.numel();
                         return n;
                       }(),
                       s.parallel.micro_batches);
  const parallel::PipelineLossFn loss_fn = [&s](const Tensor& out, const Tensor& t) { return s.train.loss(out, t); };
  data::DataLoader& loader = *s.loaders.train;
  const int64_t chunk = std::max<int64_t>(1, s.train.log_every);
  bool stopped = false;
  while (!stopped && s.position.epoch < s.plan.epochs && s.position.step < s.plan.total_steps) {
    const int64_t epoch = s.position.epoch;
    const auto epoch_start = std::chrono::steady_clock::now();
    double epoch_loss = 0;
    int64_t epoch_steps = 0;
    while (s.position.batch < s.plan.batches_per_epoch && s.position.step < s.plan.total_steps) {
      parallel::PipelineTrainOptions o;
      o.micro_batches = s.parallel.micro_batches;
      o.first_step = s.position.step;
      o.start_batch = s.position.batch;
      o.max_steps =
          std::min({chunk, s.plan.batches_per_epoch - s.position.batch, s.plan.total_steps - s.position.step});
      o.clip_grad_norm = s.train.clip_grad_norm.value_or(0.0);
      o.clip_grad_value = s.train.clip_grad_value.value_or(0.0);
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<double> losses =
          parallel::run_pipeline_parallel_epoch(pipe, loader, epoch, opt.get(), *s.schedule, loss_fn, o);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (size_t i = 0; i < losses.size(); ++i) {
        ++s.position.step;
        ++s.position.batch;
        epoch_loss += losses[i];
        ++epoch_steps;
        if (s.position.step % s.train.log_every == 0 || s.position.step == s.plan.total_steps) {
          const double lr = s.schedule->lr(s.position.step - 1, s.optimizer->param_groups().front().initial_lr);
          s.metrics->log(
              train_step_record(epoch + 1, s.position.step, losses[i], lr,
                                secs > 0 ? static_cast<double>(losses.size() * s.data.batch_size) / secs : 0.0,
                                secs / static_cast<double>(losses.size())));
        }
      }
      s.out << fmt::format("epoch {}/{} step {}  loss {:.4f}\n", epoch + 1, s.plan.epochs, s.position.step,
                           (losses.empty() ? 0.0 : losses.back()) + 0.0);
      if (s.group->any(interrupted())) {
        if (!interrupted()) set_interrupt(SIGINT);
        stopped = true;
        break;
      }
    }
    s.last_train_loss = epoch_steps > 0 ? epoch_loss / static_cast<double>(epoch_steps) : s.last_train_loss;
    if (s.position.batch >= s.plan.batches_per_epoch) {
      s.position.epoch = epoch + 1;
      s.position.batch = 0;
      Record r("epoch", epoch + 1, s.position.step);
      r.set("loss", s.last_train_loss)
          .set("time_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count())
          .set("batches", epoch_steps)
          .set("device", s.model->device().str())
          .set("pipeline_stage", static_cast<int64_t>(pipe.stage_index()));
      s.metrics->log(r);
    }
  }
  // Every rank gets the whole trained model: evaluate and save see it as one process would.
  gather_stages(*s.model, comm, owner);
  if (stopped) {
    s.status = TrainStatus::Interrupted;
    s.exit_code = static_cast<int>(exit_code_for_signal(signal_number()));
    s.out << fmt::format(
        "interrupted at step {}: mode pipeline saves no checkpoint (its resume is not supported yet)\n",
        s.position.step);
    return false;
  }
  return true;
}

}  // namespace ingot::train
