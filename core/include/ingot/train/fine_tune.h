// Training inside a pipeline stage other than `train` (distillation, pruning's fine-tuning): the
// stage's `fine_tune:` section laid over the pipeline's `train:` section, a fresh optimizer and
// schedule for the model the stage trains, the run's loaders, metrics and progress bar, and the
// stage's callbacks after the pipeline's. Such a stage keeps no checkpoints: when it is
// interrupted, `--resume` runs it again from the trained model.
#pragma once

#include <string>
#include <vector>

#include "ingot/config/schema.h"
#include "ingot/train/callback.h"
#include "ingot/train/stage_context.h"
#include "ingot/train/train_config.h"
#include "ingot/train/trainer.h"

namespace ingot::train {

/// The keys a stage's `fine_tune:` section accepts: those of `train:`.
config::Schema fine_tune_schema();

/// The pipeline's `train:` section with the keys of `section` (a validated `fine_tune:` map, or
/// undefined) in place of its own; `optimizer`, `scheduler` and `loss` are replaced whole.
TrainConfig fine_tune_config(const StageContext& context, const YAML::Node& section);

/// Trains `model` as configured by `cfg` on the run's train split with a new optimizer over its
/// parameters and a new schedule; train_step records and the progress bar carry `stage`'s name;
/// after each epoch (cfg.eval_every_epoch) evaluates `model` on the test split and logs it.
/// `callbacks` run after the pipeline's own (context.callbacks()). The evaluations use `eval_loss`
/// (default cfg.loss: pass the plain loss when cfg.loss is a training-only variant, e.g.
/// distillation's scaled cross entropy). Returns Finished, or Interrupted after a signal (the
/// run's status and exit code set, a line printed: the stage then returns false); a non-finite
/// loss throws NonFiniteError.
TrainStatus fine_tune(StageContext& context, nn::Module& model, const TrainConfig& cfg,
                      const std::vector<TrainCallback*>& callbacks, const std::string& stage,
                      const nn::Loss* eval_loss = nullptr);

}  // namespace ingot::train
