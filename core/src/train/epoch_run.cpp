// EpochRun: an epoch's micro-batches and the optimizer step (or skip) that ends each accumulation
// group, in the order callback.h documents.
#include "epoch_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ingot/ops/elementwise.h"
#include "ingot/optim/clip_grad.h"
#include "ingot/runtime/logging.h"
#include "ingot/train/interrupt.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/progress_bar.h"

namespace ingot::train {

namespace {

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

double seconds_since(EpochRun::Clock::time_point t0) {
  return std::chrono::duration<double>(EpochRun::Clock::now() - t0).count();
}

/// Starts the loader's epoch (before the feeder that reads it exists).
data::DataLoader& begin_epoch(LoopParts& loop, int64_t epoch) {
  loop.state.epoch = epoch;
  loop.ctx.loader->begin_epoch(epoch, loop.position.batch);
  return *loop.ctx.loader;
}

}  // namespace

LoopParts::LoopParts(const TrainContext& ctx, const TrainConfig& config, const TrainPlan& plan, TrainPosition& position,
                     const StepEnd& on_step_end)
    : ctx(ctx),
      config(config),
      plan(plan),
      position(position),
      on_step_end(on_step_end),
      model(*ctx.model),
      opt(*ctx.optimizer),
      params(model.parameters()),
      state{model, opt, position},
      callbacks(ctx.callbacks),
      anomaly(config.detect_anomaly ? std::make_unique<AnomalyDetector>(model) : nullptr),
      scaler(ctx.scaler != nullptr && ctx.scaler->enabled() ? ctx.scaler : nullptr),
      gate(config, model, scaler, anomaly.get()),
      observer(ctx, plan, config.log_every, scaler) {
  if (!config.compile.enabled) return;
  compiled = std::make_unique<graph::CompiledStep>(config.compile.options, params, model.buffers());
  if (ctx.progress != nullptr) compiled->on_message([p = ctx.progress](const std::string& line) { p->message(line); });
  if (anomaly) compiled->disable("train.detect_anomaly checks each op as it runs");
  std::string why_not;
  compiled_updates = CompiledUpdates::make(opt, config.compile.options, why_not);
  if (!compiled_updates) {
    log_info("compile: the optimizer step runs eager: {}", why_not);
    return;
  }
  if (ctx.progress != nullptr)
    compiled_updates->on_message([p = ctx.progress](const std::string& line) { p->message(line); });
  if (anomaly) compiled_updates->disable("train.detect_anomaly checks each op as it runs");
}

LoopParts::~LoopParts() {
  if (!compiled) return;
  const graph::CompileStats& s = compiled->stats();
  std::string line =
      fmt::format("compile: {} micro-batches replayed from {} graphs, {} captured, {} eager{}", s.replayed, s.graphs,
                  s.captured, s.eager, s.fallback.empty() ? "" : " (" + s.fallback + ")");
  const graph::CompileStats* u = compiled_updates ? &compiled_updates->stats() : nullptr;
  if (u != nullptr)
    line += fmt::format("; optimizer steps: {} replayed from {} graphs, {} captured, {} eager{}", u->replayed,
                        u->graphs, u->captured, u->eager, u->fallback.empty() ? "" : " (" + u->fallback + ")");
  if (ctx.progress != nullptr) {
    ctx.progress->message(line);
  } else {
    log_info("{}", line);
  }
  if (ctx.metrics == nullptr) return;
  Record r("compile", state.epoch + 1, position.step);
  r.set("replayed", s.replayed).set("captured", s.captured).set("eager", s.eager).set("graphs", s.graphs);
  r.set("planned_bytes", static_cast<int64_t>(s.planned_bytes)).set("fused", static_cast<int64_t>(s.fused));
  r.set("winograd", static_cast<int64_t>(s.winograd)).set("recomputed", static_cast<int64_t>(s.recomputed));
  r.set("in_place", static_cast<int64_t>(s.in_place));
  if (!s.fallback.empty()) r.set("fallback", s.fallback);
  if (u != nullptr) {
    r.set("optimizer_replayed", u->replayed).set("optimizer_captured", u->captured);
    r.set("optimizer_eager", u->eager).set("optimizer_graphs", u->graphs);
    if (!u->fallback.empty()) r.set("optimizer_fallback", u->fallback);
  }
  if (!ctx.stage.empty()) r.set("stage", ctx.stage);
  ctx.metrics->log(r);
}

EpochRun::EpochRun(LoopParts& loop, int64_t epoch)
    : loop_(loop), epoch_(epoch), feeder_(begin_epoch(loop, epoch), loop.model.device(), loop.ctx.prefetch) {
  loop.observer.epoch_started(epoch);
  loop.model.train();
  loop.opt.zero_grad();
  epoch_start_ = step_start_ = Clock::now();
}

bool EpochRun::run() {
  for (;;) {
    const Clock::time_point asked = Clock::now();
    std::optional<data::Batch> batch = next_batch(feeder_);
    const double waited = seconds_since(asked);
    data_s_ += waited;
    epoch_data_s_ += waited;
    if (!batch) break;
    micro_batch(*batch);
    const bool last_of_epoch = batch->index + 1 == loop_.plan.batches_per_epoch;
    if (micro_ < loop_.config.accumulate && !last_of_epoch) continue;
    if (finish_group(*batch)) return true;
  }
  return false;
}

void EpochRun::stop_feeding() {
  feeder_.reset();
  loop_.ctx.loader->stop();
}

void EpochRun::micro_batch(const data::Batch& batch) {
  LoopParts& l = loop_;
  if (l.anomaly && micro_ == 0) l.anomaly->clear();  // a group begins
  lr_ = apply_schedule(l.opt, *l.ctx.schedule, l.position.step);
  l.state.lr = lr_;
  // Each micro-batch's loss is divided by the size of its group: the group's gradient is the
  // mean over its batches, a short last group of the epoch included (as one large batch).
  const int64_t group_size = std::min(l.config.accumulate, l.plan.batches_per_epoch - (batch.index - micro_));
  l.state.last_micro_batch = micro_ + 1 == group_size;
  l.callbacks.step_begin(l.state, batch);
  // A compiled step's forward and backward are one phase (its replay has no boundary between).
  ProfileScope phase(l.compiled ? "forward+backward" : "forward", "step");
  const auto forward_backward = [&]() -> std::vector<Tensor> {
    // (inside the step: a captured step records the weights' casts, and a replay redoes them)
    if (l.config.amp.enabled && !l.autocast) l.autocast.emplace(l.config.amp.dtype, l.params);
    const Tensor logits = l.model(batch.inputs);
    const Tensor loss = l.callbacks.with_extra_losses(l.state, batch, logits, l.config.loss(logits, batch.targets));
    if (!l.compiled) phase.next("backward");
    const Tensor part = group_size > 1 ? loss * (1.0 / static_cast<double>(group_size)) : loss;
    (l.scaler != nullptr ? l.scaler->scale(part) : part).backward();
    return {loss};
  };
  const Tensor loss = l.compiled ? l.compiled
                                       ->run({batch.inputs, batch.targets},
                                             {{"train", l.model.is_training() ? 1 : 0}, {"group", group_size}},
                                             forward_backward)
                                       .front()
                                 : forward_backward().front();
  l.callbacks.after_backward(l.state);
  const double value = loss.item();
  phase.end();
  count(batch, value);
  const double elapsed = seconds();
  l.observer.micro_batch_done(batch, shown_loss_, lr_, elapsed > 0.0 ? epoch_data_s_ / elapsed : 0.0);
}

void EpochRun::count(const data::Batch& batch, double value) {
  ++epoch_batches_;
  ++micro_;
  group_images_ += batch.units();
  if (std::isfinite(value)) {
    group_loss_ += value;
    epoch_loss_ += value;
    ++finite_batches_;
  } else if (nonfinite_.empty()) {
    nonfinite_ = fmt::format("the loss ({})", std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf");
  }
  if (finite_batches_ > 0) shown_loss_ = epoch_loss_ / static_cast<double>(finite_batches_);
}

bool EpochRun::finish_group(const data::Batch& last) {
  ProfileScope phase("optimizer", "step");
  loop_.autocast.reset();
  const StepDecision d = loop_.gate.decide(loop_.position.step + 1, nonfinite_);
  if (d.outcome == StepOutcome::Step) return step(last, phase);
  if (d.outcome == StepOutcome::SkipNonFinite) loop_.observer.step_skipped(d.what);
  return skip_group(last);
}

bool EpochRun::step(const data::Batch& last, ProfileScope& phase) {
  LoopParts& l = loop_;
  l.callbacks.before_optimizer_step(l.state);
  double grad_norm = -1.0;
  if (l.config.clip_grad_norm) grad_norm = optim::clip_grad_norm_(l.params, *l.config.clip_grad_norm);
  if (l.config.clip_grad_value) optim::clip_grad_value_(l.params, *l.config.clip_grad_value);
  if (l.compiled_updates) {
    l.compiled_updates->step();
  } else {
    l.opt.step();
  }
  if (l.scaler != nullptr) l.scaler->update(false);
  l.callbacks.after_optimizer_step(l.state);
  l.opt.zero_grad();
  phase.end();
  ++l.position.step;
  consume(last);
  const double loss = l.callbacks.step_loss(l.state, group_loss_ / static_cast<double>(micro_));
  l.observer.step_done({epoch_ + 1, l.position.step, loss, lr_, group_images_, seconds_since(step_start_), grad_norm,
                        l.gate.skipped(), data_s_});
  reset_group();
  // A step checkpoint at the epoch's end would repeat the epoch checkpoint written next.
  if (l.on_step_end && l.position.batch < l.plan.batches_per_epoch) l.on_step_end(l.position);
  step_start_ = Clock::now();
  return l.position.step >= l.plan.total_steps || l.callbacks.agree_to_stop(l.state, interrupted());
}

bool EpochRun::skip_group(const data::Batch& last) {
  loop_.opt.zero_grad();
  consume(last);
  reset_group();
  step_start_ = Clock::now();
  return loop_.callbacks.agree_to_stop(loop_.state, interrupted());
}

void EpochRun::consume(const data::Batch& last) {
  loop_.position.batch = last.index + 1;
  loop_.position.rng = loop_.ctx.dropout_gen->state();
}

void EpochRun::reset_group() {
  group_loss_ = 0.0;
  micro_ = 0;
  group_images_ = 0;
  data_s_ = 0.0;
  nonfinite_.clear();
}

}  // namespace ingot::train
