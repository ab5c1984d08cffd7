// The built-in stages: train (the training loop with checkpoints per epoch and on a signal),
// evaluate (test accuracy, loss and confusion matrix), save (model.safetensors).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include <ostream>

#include "ingot/io/safetensors.h"
#include "ingot/train/data_parallel.h"
#include "ingot/train/interrupt.h"
#include "ingot/train/nonfinite_guard.h"
#include "ingot/train/stage.h"
#include "pipeline_parallel_train.h"
#include "pipeline_state.h"

namespace ingot::train {
namespace {

/// "N samples  accuracy A%  loss L" (a language model's: tokens, next-token or masked-token
/// accuracy, perplexity).
std::string metrics_text(const EvalResult& r) {
  // (+ 0.0 turns a loss of -0.0 into 0.0, which prints without a sign)
  if (r.tokens)
    return fmt::format("{} tokens  {} accuracy {:.2f}%  loss {:.4f}  perplexity {:.2f}", r.samples,
                       r.masked ? "masked-token" : "next-token", 100.0 * r.accuracy, r.loss + 0.0, r.perplexity());
  return fmt::format("{} samples  accuracy {:.2f}%  loss {:.4f}", r.samples, 100.0 * r.accuracy, r.loss + 0.0);
}

std::string eval_line(const EvalResult& r) {
  return fmt::format("evaluate: {}  ({:.1f} s)", metrics_text(r), r.seconds);
}

/// The confusion matrix under the evaluate line; nothing for a vocabulary.
std::string confusion_text(const EvalResult& r) { return r.tokens ? std::string() : r.confusion.table() + "\n"; }

Record eval_record(const EvalResult& r, int64_t epoch, int64_t step) {
  Record rec("eval", epoch, step);
  rec.set("split", "test")
      .set("loss", r.loss)
      .set("accuracy", r.accuracy)
      .set("samples", r.samples)
      .set("time_s", r.seconds);
  if (r.tokens)
    rec.set("perplexity", r.perplexity());
  else
    rec.set("confusion", RawJson{r.confusion.to_json()});
  return rec;
}

class TrainStage final : public PipelineStage {
 public:
  std::string name() const override { return "train"; }
  bool trains() const override { return true; }
  bool runs_distributed() const override { return true; }
  bool run(StageContext& context) override {
    PipelineState& s = pipeline_state(context);
    if (s.group != nullptr && s.parallel.mode == "pipeline") return train_pipeline_parallel(s);
    InterruptGuard guard("\ningot: stopping after the current step to save a checkpoint (Ctrl-C again stops now)\n");
    TrainContext ctx{s.model.get(),  s.optimizer.get(), s.schedule.get(), s.loaders.train.get(),
                     &s.dropout_gen, s.metrics.get(),   s.progress.get(), s.data.prefetch};
    for (const auto& cb : s.callbacks) ctx.callbacks.push_back(cb.get());
    ctx.scaler = s.scaler.get();
    const EpochEnd on_epoch_end = [&s](int64_t epoch, const TrainPosition& pos, double loss) {
      s.last_train_loss = loss;
      bool go_on = true;
      if (s.train.eval_every_epoch && pos.batch == 0) {
        if (s.loaders.validation) {  // model selection on validation; the test split waits for the end
          go_on = s.validate_epoch(epoch, pos);
        } else {
          const EvalResult& r = s.evaluate_now();
          s.progress->message(eval_line(r));
          s.metrics->log(eval_record(r, epoch, pos.step));
        }
      }
      const bool last = !go_on || pos.epoch >= s.plan.epochs || pos.step >= s.plan.total_steps;
      if (last || epoch % s.train.checkpoint_every == 0) {
        if (s.writes_files()) {
          s.save_checkpoint(s.run->epoch_checkpoint(epoch), pos);
          s.run->remove_old_checkpoints("epoch", s.train.checkpoint_keep_epochs);
        }
      }
      return go_on;
    };
    // Step checkpoints (train.checkpoint.every_steps / every_minutes), the newest keep_last kept
    // (epoch checkpoints: the newest keep_epochs):
    // what a SIGKILL, an OOM kill or a preemption can lose is bounded by them.
    auto last_checkpoint = std::chrono::steady_clock::now();
    const StepEnd on_step_end = [&s, &last_checkpoint](const TrainPosition& pos) {
      const TrainConfig& t = s.train;
      const bool by_steps = t.checkpoint_every_steps > 0 && pos.step % t.checkpoint_every_steps == 0;
      const double minutes =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint).count() / 60.0;
      const bool by_time = t.checkpoint_every_minutes > 0 && minutes >= t.checkpoint_every_minutes;
      if ((!by_steps && !by_time) || !s.writes_files()) return;
      s.save_checkpoint(s.run->step_checkpoint(pos.step), pos);
      last_checkpoint = std::chrono::steady_clock::now();
      s.run->remove_old_checkpoints("step", t.checkpoint_keep_last);
    };
    try {
      s.status = train_loop(ctx, s.train, s.plan, s.position, on_epoch_end, on_step_end);
    } catch (const NonFiniteError& e) {
      // Nothing is saved from the non-finite state; the last checkpoint is the one to go back to.
      const auto latest = s.run->latest_checkpoint();
      s.status = TrainStatus::Failed;
      // (with skip_step already set, the steps it could skip ran out, or a weight went non-finite)
      const std::string lever = s.train.on_nonfinite == "skip_step"
                                    ? "lower the learning rate (or clip the gradients: train.clip_grad_norm)"
                                    : "lower the learning rate (or set train.on_nonfinite: skip_step)";
      s.failure =
          fmt::format("{}; nothing was saved from it. {}", e.what(),
                      latest ? fmt::format("The last good checkpoint is {}.safetensors: {} and run again "
                                           "with --resume",
                                           latest->string(), lever)
                             : fmt::format("No checkpoint was saved before it: {} and start over with --force", lever));
      return false;
    }
    if (s.status != TrainStatus::Interrupted) {
      if (s.stopped_early_at > 0 && s.train.early_stopping.restore_best) s.restore_best();
      return true;
    }
    if (s.writes_files()) {
      s.save_checkpoint(s.run->step_checkpoint(s.position.step), s.position);
      s.run->remove_old_checkpoints("step", s.train.checkpoint_keep_last);
    }
    s.exit_code = static_cast<int>(exit_code_for_signal(signal_number()));
    s.out << fmt::format("interrupted at step {}: checkpoint saved; continue with: ingot run {} --resume\n",
                         s.position.step, s.cfg.file());
    return false;
  }
};

class EvaluateStage final : public PipelineStage {
 public:
  std::string name() const override { return "evaluate"; }
  bool runs_distributed() const override { return true; }
  bool run(StageContext& context) override {
    PipelineState& s = pipeline_state(context);
    // The evaluation after the last epoch serves when nothing changed since (already printed and
    // logged: only its confusion matrix is added); otherwise (a steps budget ending mid-epoch, no
    // training) evaluate the weights as they are now.
    if (s.last_eval && s.last_eval_step == s.position.step) {
      s.out << confusion_text(*s.last_eval);
      return true;
    }
    const EvalResult& r = s.evaluate_now();
    s.out << eval_line(r) << "\n" << confusion_text(r);
    s.metrics->log(eval_record(r, s.position.epoch, s.position.step));
    return true;
  }
};

class SaveStage final : public PipelineStage {
 public:
  std::string name() const override { return "save"; }
  bool runs_distributed() const override { return true; }
  bool run(StageContext& context) override {
    PipelineState& s = pipeline_state(context);
    s.refuse_nonfinite_weights(s.position.step);
    if (!s.writes_files()) return true;  // (rank 0 saves the weights every rank has)
    const std::filesystem::path weights = s.run->path() / "model.safetensors";
    io::save_safetensors(weights, s.model->state_dict(), io::Metadata{{"format", "pt"}});
    s.out << fmt::format("save: weights in {} (torch.nn state_dict names)\n", weights.string());
    return true;
  }
};

template <class S>
StageRegistry::Entry builtin(const std::string& type, const std::string& help) {
  return {type, config::Schema(),
          [](const YAML::Node&, const std::string&) -> std::unique_ptr<PipelineStage> { return std::make_unique<S>(); },
          help};
}

}  // namespace

StageRegistry& stage_registry() {
  static StageRegistry* registry = [] {
    auto* r = new StageRegistry("stage");
    r->add(builtin<TrainStage>("train", "the training loop (train:), checkpoints per epoch and on a signal"));
    r->add(builtin<EvaluateStage>("evaluate", "test accuracy, loss and confusion matrix"));
    r->add(builtin<SaveStage>("save", "model.safetensors with torch.nn state_dict names"));
    return r;
  }();
  return *registry;
}

std::vector<std::unique_ptr<PipelineStage>> make_stages(const YAML::Node& node, const std::string& file) {
  std::vector<std::unique_ptr<PipelineStage>> out;
  if (!node || node.IsNull()) {
    for (const char* name : {"train", "evaluate", "save"})
      out.push_back(stage_registry().make(YAML::Node(name), file, "stages"));
    return out;
  }
  if (!node.IsSequence())
    throw ConfigError(fmt::format("{}: stages: expected a list of stages ({})", config::where(file, node),
                                  fmt::join(stage_registry().types(), " | ")));
  for (size_t i = 0; i < node.size(); ++i)
    out.push_back(stage_registry().make(node[i], file, fmt::format("stages[{}]", i)));
  return out;
}

void PipelineState::save_checkpoint(const std::filesystem::path& stem, const TrainPosition& pos, bool latest) {
  refuse_nonfinite_weights(pos.step);
  Checkpoint c{pos, model->state_dict(), optimizer->state_dict()};
  if (scaler != nullptr && scaler->enabled()) c.scaler = scaler->state_dict();
  if (selection) c.selection = selection->state();
  train::save_checkpoint(stem.string() + ".safetensors", c);
  if (latest) run->set_latest_checkpoint(stem);
}

bool PipelineState::validate_epoch(int64_t epoch, const TrainPosition& pos) {
  const EvalResult r = evaluate(*model, *loaders.validation, class_names, &train.loss, &train.amp,
                                  train.compile.enabled ? &train.compile.options : nullptr);
  const bool best = selection->update(selection->monitored(r.loss, r.accuracy), epoch);
  Record rec = eval_record(r, epoch, pos.step);
  rec.set("split", "validation").set("best", best);  // (replaces "test")
  metrics->log(rec);
  std::string line = "validate: " + metrics_text(r);
  if (best) {
    if (writes_files()) save_checkpoint(run->best_checkpoint(), pos, /*latest=*/false);
    line += fmt::format("  best {} so far: checkpoints/best.safetensors", selection->metric());
  } else {
    line += fmt::format("  (best {} {:.4f} at epoch {})", selection->metric(), selection->best().value_or(0.0),
                        selection->best_epoch());
  }
  progress->message(line);
  const EarlyStoppingConfig& es = train.early_stopping;
  if (!es.enabled || !selection->exhausted()) return true;
  stopped_early_at = epoch;
  progress->message(fmt::format("early stopping: {} did not improve for {} epochs; the best was epoch {} ({:.4f})",
                                selection->metric(), es.patience, selection->best_epoch(),
                                selection->best().value_or(0.0)));
  Record stop("early_stop", epoch, pos.step);
  stop.set("metric", selection->metric()).set("best_epoch", selection->best_epoch());
  if (selection->best()) stop.set("best", *selection->best());
  metrics->log(stop);
  return false;
}

void PipelineState::restore_best() {
  const std::filesystem::path file = run->best_checkpoint().string() + ".safetensors";
  if (!selection->best()) return;  // (no epoch improved: nothing to go back to)
  // Rank 0 wrote the file; the others take its weights from rank 0 (they may not see its disk).
  if (writes_files()) model->load_state_dict(load_checkpoint(file).model, /*strict=*/true);
  if (group != nullptr) broadcast_module(*model, group->comm());
  forget_evaluation();
  out << fmt::format("early stopping: restored the weights of epoch {} ({} {:.4f}) from {}\n", selection->best_epoch(),
                     selection->metric(), selection->best().value_or(0.0), file.string());
}

void PipelineState::refuse_nonfinite_weights(int64_t step) const {
  if (const std::string w = NonFiniteGuard(model->named_parameters()).check_weights(); !w.empty())
    throw NonFiniteError(fmt::format("step {}: {} is not finite, so it is not saved", step, w));
}

const EvalResult& PipelineState::evaluate_now() {
  last_eval = evaluate(*model, *loaders.test, class_names, &train.loss, &train.amp,
                       train.compile.enabled ? &train.compile.options : nullptr);
  last_eval_step = position.step;
  return *last_eval;
}

}  // namespace ingot::train
