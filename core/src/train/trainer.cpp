// The training loop.
#include "ingot/train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "ingot/amp/autocast.h"
#include "ingot/nn/loss.h"
#include "ingot/ops/elementwise.h"
#include "ingot/optim/clip_grad.h"
#include "ingot/runtime/op_counts.h"
#include "ingot/runtime/profiler.h"
#include "ingot/train/anomaly_detector.h"
#include "ingot/train/device_feeder.h"
#include "ingot/train/interrupt.h"
#include "ingot/train/nonfinite_guard.h"

namespace ingot::train {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Sets every group's lr from the schedule at `step`; returns the first group's.
double apply_schedule(optim::Optimizer& opt, const optim::LrSchedule& schedule, int64_t step) {
  double first = 0.0;
  bool have = false;
  for (optim::ParamGroup& g : opt.param_groups()) {
    g.options.set_lr(schedule.lr(step, g.initial_lr));
    if (!have) first = g.options.lr();
    have = true;
  }
  return first;
}

/// The next batch on the model's device, timed as the step's "data" phase.
std::optional<data::Batch> next_batch(DeviceFeeder& feeder) {
  const ProfileScope profile("data", "step");
  return feeder.next();
}

}  // namespace

TrainPlan make_train_plan(const TrainConfig& config, int64_t batches_per_epoch) {
  TrainPlan p;
  p.batches_per_epoch = batches_per_epoch;
  INGOT_CHECK_AS(batches_per_epoch > 0, InputError,
                 "training data gives no batch per epoch: lower data.batch_size or set data.drop_last: false");
  p.steps_per_epoch = (batches_per_epoch + config.accumulate - 1) / config.accumulate;
  if (config.steps > 0) {
    p.total_steps = config.steps;
    p.epochs = (config.steps + p.steps_per_epoch - 1) / p.steps_per_epoch;
  } else {
    p.epochs = config.epochs;
    p.total_steps = config.epochs * p.steps_per_epoch;
  }
  return p;
}

TrainStatus train_loop(const TrainContext& ctx, const TrainConfig& config, const TrainPlan& plan,
                       TrainPosition& position, const EpochEnd& on_epoch_end, const StepEnd& on_step_end) {
  nn::Module& model = *ctx.model;
  optim::Optimizer& opt = *ctx.optimizer;
  data::DataLoader& loader = *ctx.loader;
  const std::vector<Tensor> params = model.parameters();
  TrainState state{model, opt, position};
  const NonFiniteGuard guard(model.named_parameters());
  const bool skip_nonfinite = config.on_nonfinite == "skip_step";
  int64_t skipped = 0, skipped_in_row = 0;
  std::optional<AnomalyDetector> anomaly;
  if (config.detect_anomaly) anomaly.emplace(model);
  amp::GradScaler* scaler = ctx.scaler != nullptr && ctx.scaler->enabled() ? ctx.scaler : nullptr;
  // One autocast region per optimizer step: each weight is cast once for all its micro-batches,
  // and the region ends before the optimizer changes the weights.
  std::optional<amp::AutocastRegion> autocast;
  const auto each = [&ctx](auto&& fn) {
    for (TrainCallback* cb : ctx.callbacks) fn(*cb);
  };

  while (position.epoch < plan.epochs && position.step < plan.total_steps) {
    const int64_t epoch = position.epoch;
    state.epoch = epoch;
    loader.begin_epoch(epoch, position.batch);
    DeviceFeeder feeder(loader, model.device(), ctx.prefetch);
    if (ctx.progress) ctx.progress->start_epoch(epoch + 1, plan.epochs, plan.batches_per_epoch);
    model.train();
    opt.zero_grad();
    const auto epoch_start = std::chrono::steady_clock::now();
    double epoch_loss = 0.0, group_loss = 0.0, shown_loss = 0.0;
    int64_t epoch_batches = 0, finite_batches = 0, micro = 0, group_images = 0;
    std::string nonfinite;  // the group's first non-finite quantity
    auto step_start = std::chrono::steady_clock::now();
    bool stop = false;
    // Whether to stop after this step: this process's signal flag, put to the callbacks (ranks of
    // a distributed run decide together, so all stop at the same step).
    const auto stop_requested = [&] {
      bool stop_now = interrupted();
      for (TrainCallback* cb : ctx.callbacks) stop_now = cb->agree_to_stop(state, stop_now);
      return stop_now;
    };
    // Ends a group that takes no optimizer step (overflow, skip_step): its gradients are dropped,
    // its batches count as consumed, the step count and the schedule stay. True: interrupted.
    const auto skip_group = [&](const data::Batch& last) {
      opt.zero_grad();
      position.batch = last.index + 1;
      position.rng = ctx.dropout_gen->state();
      group_loss = 0.0;
      micro = 0;
      group_images = 0;
      nonfinite.clear();
      step_start = std::chrono::steady_clock::now();
      return stop_requested();
    };
    while (auto batch = next_batch(feeder)) {
      if (anomaly && micro == 0) anomaly->clear();  // a group begins
      const double lr = apply_schedule(opt, *ctx.schedule, position.step);
      state.lr = lr;
      // Each micro-batch's loss is divided by the size of its group: the group's gradient is the
      // mean over its batches, a short last group of the epoch included (as one large batch).
      const int64_t group_size = std::min(config.accumulate, plan.batches_per_epoch - (batch->index - micro));
      state.last_micro_batch = micro + 1 == group_size;
      each([&](TrainCallback& cb) { cb.on_step_begin(state, *batch); });
      ProfileScope phase("forward", "step");
      if (config.amp.enabled && !autocast) autocast.emplace(config.amp.dtype, params);
      const Tensor logits = model(batch->inputs);
      Tensor loss = config.loss(logits, batch->targets);
      for (TrainCallback* cb : ctx.callbacks)
        if (const Tensor extra = cb->extra_loss(state, *batch, logits, loss); extra.defined()) loss = loss + extra;
      phase.next("backward");
      const Tensor group_loss_part = group_size > 1 ? loss * (1.0 / static_cast<double>(group_size)) : loss;
      (scaler != nullptr ? scaler->scale(group_loss_part) : group_loss_part).backward();
      each([&](TrainCallback& cb) { cb.after_backward(state); });
      const double value = loss.item();
      phase.end();
      ++epoch_batches;
      ++micro;
      group_images += batch->targets.numel();
      if (std::isfinite(value)) {
        group_loss += value;
        epoch_loss += value;
        ++finite_batches;
      } else if (nonfinite.empty()) {
        nonfinite = fmt::format("the loss ({})", std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf");
      }
      if (finite_batches > 0) shown_loss = epoch_loss / static_cast<double>(finite_batches);
      if (ctx.progress && scaler != nullptr)
        ctx.progress->set_status(scaler->skipped_steps() > 0 ? fmt::format("scale {:g} ({} skipped)", scaler->get_scale(),
                                                                          scaler->skipped_steps())
                                                            : fmt::format("scale {:g}", scaler->get_scale()));
      if (ctx.progress) ctx.progress->update(batch->index + 1, batch->targets.numel(), shown_loss, lr);

      const bool last_of_epoch = batch->index + 1 == plan.batches_per_epoch;
      if (micro < config.accumulate && !last_of_epoch) continue;
      // One optimizer step over the group's accumulated gradients.
      phase.next("optimizer");
      autocast.reset();
      // Loss scaling: unscale once; overflowed gradients (with a finite loss) skip the step.
      if (scaler != nullptr && nonfinite.empty() && !scaler->unscale_(params)) {
        const double was = scaler->get_scale();
        if (!scaler->update(true))
          throw NonFiniteError(fmt::format(
              "step {}: the gradients are not finite at the smallest loss scale allowed ({} = "
              "train.amp.loss_scale.min_scale)",
              position.step + 1, was));
        if (skip_group(*batch)) {
          stop = true;
          break;
        }
        continue;
      }
      // Weights are checked only when a loss went non-finite (a weight that did is the cause to
      // name) and before anything is saved: a step that is fine costs one gradient norm.
      bool weights_bad = false;
      if (!nonfinite.empty()) {
        if (std::string w = guard.check_weights(); !w.empty()) nonfinite = std::move(w), weights_bad = true;
      } else if (scaler == nullptr) {  // (unscale_ has checked them)
        nonfinite = guard.check_gradients();
      }
      if (!nonfinite.empty()) {
        std::string what = fmt::format("step {}: {} is not finite", position.step + 1, nonfinite);
        if (anomaly) {
          const std::string first = anomaly->first();
          what += first.empty() ? " (anomaly detection saw no op output go non-finite)"
                                : fmt::format(" (anomaly detection: {})", first);
        }
        if (!skip_nonfinite || weights_bad) throw NonFiniteError(what);
        // skip_step: no update from this group.
        if (scaler != nullptr) scaler->update(true);
        ++skipped;
        if (++skipped_in_row >= config.max_skipped)
          throw NonFiniteError(fmt::format("{}, and that made {} steps in a row skipped (train.max_skipped: {})", what,
                                           skipped_in_row, config.max_skipped));
        if (ctx.progress) ctx.progress->message(fmt::format("{}: optimizer step skipped", what));
        if (skip_group(*batch)) {
          stop = true;
          break;
        }
        continue;
      }
      skipped_in_row = 0;
      each([&](TrainCallback& cb) { cb.before_optimizer_step(state); });
      double grad_norm = -1.0;
      if (config.clip_grad_norm) grad_norm = optim::clip_grad_norm_(params, *config.clip_grad_norm);
      if (config.clip_grad_value) optim::clip_grad_value_(params, *config.clip_grad_value);
      opt.step();
      if (scaler != nullptr) scaler->update(false);
      each([&](TrainCallback& cb) { cb.after_optimizer_step(state); });
      opt.zero_grad();
      phase.end();
      ++position.step;
      position.batch = batch->index + 1;
      position.rng = ctx.dropout_gen->state();
      double step_loss = group_loss / static_cast<double>(micro);
      for (TrainCallback* cb : ctx.callbacks) step_loss = cb->step_loss(state, step_loss);
      if (ctx.metrics && (position.step % config.log_every == 0 || position.step == plan.total_steps)) {
        const double secs = seconds_since(step_start);
        Record r = train_step_record(epoch + 1, position.step, step_loss, lr,
                                     secs > 0 ? static_cast<double>(group_images) / secs : 0.0, secs);
        if (!ctx.stage.empty()) r.set("stage", ctx.stage);
        if (grad_norm >= 0) r.set("grad_norm", grad_norm);
        if (skipped > 0) r.set("skipped_steps", skipped);
        if (scaler != nullptr) r.set("loss_scale", scaler->get_scale()).set("amp_skipped_steps", scaler->skipped_steps());
        ctx.metrics->log(r);
      }
      group_loss = 0.0;
      micro = 0;
      group_images = 0;
      // A step checkpoint at the epoch's end would repeat the epoch checkpoint written next.
      if (on_step_end && position.batch < plan.batches_per_epoch) on_step_end(position);
      step_start = std::chrono::steady_clock::now();
      if (position.step >= plan.total_steps || stop_requested()) {
        stop = true;
        break;
      }
    }
    const bool epoch_done = position.batch >= plan.batches_per_epoch;
    const double secs = seconds_since(epoch_start);
    if (ctx.progress)
      ctx.progress->finish_epoch(epoch_done ? "" : fmt::format("  stopped at batch {}", position.batch));
    if (!epoch_done) {
      feeder.reset();
      loader.stop();
      if (position.step >= plan.total_steps) {  // a `steps:` budget ending mid-epoch
        if (on_epoch_end) on_epoch_end(epoch + 1, position, shown_loss);
        each([&](TrainCallback& cb) { cb.on_epoch_end(state); });
        return TrainStatus::Finished;
      }
      return TrainStatus::Interrupted;
    }
    position.epoch = epoch + 1;
    position.batch = 0;
    if (ctx.metrics) {
      Record r("epoch", epoch + 1, position.step);
      r.set("loss", shown_loss).set("time_s", secs).set("batches", epoch_batches);
      if (!ctx.stage.empty()) r.set("stage", ctx.stage);
      r.set("device", model.device().str()).set("ops_by_backend", RawJson{ops_by_backend_json()});
      ctx.metrics->log(r);
    }
    const bool go_on = !on_epoch_end || on_epoch_end(epoch + 1, position, shown_loss);
    each([&](TrainCallback& cb) { cb.on_epoch_end(state); });
    if (!go_on) return TrainStatus::Finished;
    if (stop && position.step < plan.total_steps) return TrainStatus::Interrupted;
  }
  return TrainStatus::Finished;
}

}  // namespace ingot::train
