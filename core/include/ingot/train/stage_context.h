// StageContext: what a pipeline stage sees of the run it is part of, and all it may change. A
// stage reads the config, the data loaders, where training stands, and writes to the run's
// output, metrics and progress bar; it may replace the model or say that it changed it, add
// trainer callbacks for the stages after it, leave a note for the stage table, and fail with a
// reason. The pipeline's own state (optimizer, checkpoints, run folder, model selection) stays
// behind this class, so the pipeline can change without breaking an extension's stage.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ingot/config/config.h"
#include "ingot/data/data_config.h"
#include "ingot/nn/module.h"
#include "ingot/ops/random.h"
#include "ingot/train/callback.h"
#include "ingot/train/evaluate.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/progress_bar.h"
#include "ingot/train/train_config.h"

namespace ingot::train {

struct PipelineState;

class StageContext {
 public:
  /// (Made by the pipeline for each stage it runs; see StageHarness to run a stage in a test.)
  explicit StageContext(PipelineState& state) : s_(&state) {}

  // --- the run -----------------------------------------------------------------------------
  const config::Config& config() const;
  /// The console: what the stage prints goes to the terminal and the run's console.log.
  std::ostream& out() const;
  /// The run's seed (`seed:`): a stage's own random choices derive from it.
  uint64_t seed() const;
  /// The generator the model's initial weights came from: a stage that builds a new model
  /// (distillation's student) draws its weights from it, so runs stay reproducible.
  Generator& init_generator() const;
  /// The generator dropout masks draw from: a new model's dropout layers take it.
  Generator& dropout_generator() const;
  /// The pipeline's `train:` section as parsed (loss, amp, optimizer, ...).
  const TrainConfig& train_config() const;
  /// `data:` as parsed (batch size, workers, prefetch, ...).
  const data::DataConfig& data_config() const;
  data::DataLoader& train_loader() const;
  data::DataLoader& test_loader() const;
  /// Null when the run has no validation split.
  data::DataLoader* validation_loader() const;
  const std::vector<std::string>& class_names() const;
  /// Where training stands: epoch, batch and optimizer step so far (records carry them).
  const TrainPosition& position() const;
  /// Whether this process writes the run's files (rank 0 of a distributed run, or the only one).
  bool writes_files() const;
  int world_size() const;
  /// The run's metrics.jsonl (a no-op log on ranks other than 0).
  MetricsLog& metrics() const;
  ProgressBar& progress() const;

  // --- the model ---------------------------------------------------------------------------
  nn::Module& model() const;
  const nn::ModulePtr& model_ptr() const;
  /// Puts `model` in the pipeline's place (distillation's student): the later stages, the saved
  /// weights and the evaluation see it. Forgets the last evaluation.
  void replace_model(nn::ModulePtr model);
  /// Says that the stage changed the model's weights or structure in place, so that the next
  /// `evaluate` measures it instead of reusing an earlier result.
  void model_changed();
  /// The last evaluation on the test split, while the model is unchanged since; else null.
  const EvalResult* last_evaluation() const;

  // --- trainer callbacks -------------------------------------------------------------------
  /// Callbacks of the trainer, in order (`train.callbacks:`, then what stages added).
  std::vector<TrainCallback*> callbacks() const;
  /// Adds `callback` after the others: it hears the training of the stages that follow.
  void add_callback(std::unique_ptr<TrainCallback> callback);

  // --- what the stage did ------------------------------------------------------------------
  /// A short line for the stage's row of the table (`report: {stages: true}`), e.g. "int8
  /// static, 4 of 4 layers".
  void set_note(std::string note);
  const std::string& note() const;
  /// The stage failed: `why` goes to the summary and is the run's error line (non-zero exit).
  /// The stage then returns false.
  void fail(std::string why);

 private:
  PipelineState* s_;
  friend PipelineState& pipeline_state(StageContext& context);
};

}  // namespace ingot::train
