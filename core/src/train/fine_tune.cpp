// Training inside a pipeline stage other than `train`: the stage's `fine_tune:` keys over the
// pipeline's `train:` section, a new optimizer and schedule, the run's loaders and records.
#include "ingot/train/fine_tune.h"

#include <fmt/format.h>

#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer_config.h"
#include "ingot/train/interrupt.h"
#include "pipeline_state.h"

namespace ingot::train {

config::Schema fine_tune_schema() { return train_schema(); }

TrainConfig fine_tune_config(const StageContext& context, const YAML::Node& section) {
  const YAML::Node base = context.config().node("train");
  YAML::Node merged = base && base.IsMap() ? YAML::Clone(base) : YAML::Node(YAML::NodeType::Map);
  // Checkpoints and callbacks belong to the train stage; a stage's fine-tuning keeps neither.
  merged.remove("callbacks");
  if (section && section.IsMap())
    for (const auto& kv : section) merged[kv.first.as<std::string>()] = YAML::Clone(kv.second);
  return parse_train_config(merged, context.config().file());
}

TrainStatus fine_tune(StageContext& context, nn::Module& model, const TrainConfig& cfg,
                      const std::vector<TrainCallback*>& callbacks, const std::string& stage,
                      const nn::Loss* eval_loss) {
  PipelineState& s = pipeline_state(context);
  const std::string& file = s.cfg.file();
  std::unique_ptr<optim::Optimizer> optimizer =
      optim::make_optimizer(cfg.optimizer, model.named_parameters(), file, stage + ".fine_tune.optimizer");
  const TrainPlan plan = make_train_plan(cfg, s.loaders.train->num_batches());
  std::unique_ptr<optim::LrSchedule> schedule = optim::make_schedule(cfg.scheduler, file, plan.total_steps);
  amp::GradScaler scaler(cfg.amp.scaler);
  TrainContext ctx{&model,         optimizer.get(), schedule.get(),   s.loaders.train.get(),
                   &s.dropout_gen, s.metrics.get(), s.progress.get(), s.data.prefetch};
  for (const auto& cb : s.callbacks) ctx.callbacks.push_back(cb.get());
  for (TrainCallback* cb : callbacks) ctx.callbacks.push_back(cb);
  ctx.scaler = &scaler;
  ctx.stage = stage;
  s.out << fmt::format("{}: fine-tuning {} parameters for {} steps ({} epochs), optimizer {}\n", stage,
                       model.num_parameters(), plan.total_steps, plan.epochs, optimizer->type());
  TrainPosition position;
  position.rng = s.dropout_gen.state();
  const EpochEnd on_epoch_end = [&](int64_t epoch, const TrainPosition& pos, double loss) {
    s.last_train_loss = loss;
    if (!cfg.eval_every_epoch || pos.batch != 0) return true;
    // Per-epoch numbers come from the validation split when there is one (the test split is for the end).
    data::DataLoader& loader = s.loaders.validation ? *s.loaders.validation : *s.loaders.test;
    const EvalResult r = evaluate(model, loader, s.class_names, eval_loss != nullptr ? eval_loss : &cfg.loss, &cfg.amp);
    s.progress->message(
        fmt::format("{}: epoch {} accuracy {:.2f}%  loss {:.4f}", stage, epoch, 100.0 * r.accuracy, r.loss + 0.0));
    Record rec("eval", epoch, pos.step);
    rec.set("stage", stage).set("split", s.loaders.validation ? "validation" : "test");
    rec.set("loss", r.loss).set("accuracy", r.accuracy).set("samples", r.samples);
    s.metrics->log(rec);
    return true;
  };
  const TrainStatus status = train_loop(ctx, cfg, plan, position, on_epoch_end);
  if (status == TrainStatus::Interrupted) {
    s.status = TrainStatus::Interrupted;
    s.exit_code = static_cast<int>(exit_code_for_signal(signal_number()));
    s.out << fmt::format(
        "interrupted in the {} stage at step {}: its work is not saved; `ingot run {} --resume` "
        "runs it again from the trained model\n",
        stage, position.step, s.cfg.file());
  }
  return status;
}

}  // namespace ingot::train
