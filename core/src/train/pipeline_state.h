// PipelineState: what one `ingot run` holds while its stages run — the objects the config built
// (data, model, optimizer, schedule, loss), the run folder and its metrics, where training stands,
// the last evaluation, and the trainer callbacks. Internal to libingot: the built-in stages reach
// it through pipeline_state(StageContext&); every other stage sees only its StageContext
// (ingot/train/stage_context.h).
#pragma once

#include <cmath>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/amp/grad_scaler.h"
#include "ingot/config/config.h"
#include "ingot/data/data_config.h"
#include "ingot/nn/module.h"
#include "ingot/ops/random.h"
#include "ingot/optim/lr_schedule.h"
#include "ingot/optim/optimizer.h"
#include "ingot/parallel/parallel_config.h"
#include "ingot/parallel/process_group.h"
#include "ingot/train/callback.h"
#include "ingot/train/early_stopping.h"
#include "ingot/train/evaluate.h"
#include "ingot/train/memory_estimate.h"
#include "ingot/train/memory_watch.h"
#include "ingot/train/metrics_log.h"
#include "ingot/train/progress_bar.h"
#include "ingot/train/run_dir.h"
#include "ingot/train/stage.h"
#include "ingot/train/stage_context.h"
#include "ingot/train/stage_report.h"
#include "ingot/train/train_config.h"
#include "ingot/train/trainer.h"

namespace ingot::train {

struct PipelineState {
  PipelineState(const config::Config& config, std::ostream& output, uint64_t run_seed)
      : cfg(config), out(output), seed(run_seed), init_gen(run_seed), dropout_gen(run_seed ^ kDropoutStream) {}
  PipelineState(const PipelineState&) = delete;
  PipelineState& operator=(const PipelineState&) = delete;

  /// Dropout masks draw from a stream of their own, so the initial weights do not depend on them.
  static constexpr uint64_t kDropoutStream = 0x9E3779B97F4A7C15ull;

  const config::Config& cfg;
  std::ostream& out;
  uint64_t seed;
  Generator init_gen;
  Generator dropout_gen;  ///< Dropout layers hold a pointer to it: the state never moves

  data::DataConfig data;
  TrainConfig train;
  nn::ModulePtr model;
  data::DataLoaders loaders;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LrSchedule> schedule;
  std::unique_ptr<amp::GradScaler> scaler;  ///< train.amp.loss_scale (disabled when off); in checkpoints
  TrainPlan plan;
  MemoryEstimate memory;       ///< of training at data.batch_size, from shapes (train/memory_estimate.h)
  MemoryBudget memory_budget;  ///< what the device had available when the pipeline was built
  std::string checkpointing;   ///< train.checkpointing's plan as the header prints it ("" = off)
  /// The run's memory: the progress bar's and metrics' numbers, stage peaks, the memory report.
  std::unique_ptr<MemoryWatch> memory_watch;
  std::vector<std::string> class_names;
  /// Model keys taken from the data (a preset's classes, vocab_size, pad_id) where the config leaves
  /// them out.
  std::map<std::string, int64_t> inferred_model_keys;
  std::vector<std::unique_ptr<PipelineStage>> stages;

  /// `parallel:` and the group this process belongs to (null: one process; owned by the caller).
  parallel::ParallelConfig parallel;
  const parallel::ProcessGroup* group = nullptr;
  /// Whether this process writes the run's files: checkpoints, metrics, summary (rank 0 alone).
  bool writes_files() const { return group == nullptr || group->writes_files(); }
  int world_size() const { return group == nullptr ? 1 : group->world_size(); }

  std::optional<RunDir> run;
  std::unique_ptr<MetricsLog> metrics;
  std::unique_ptr<ProgressBar> progress;

  TrainPosition position;
  /// The best epoch on the validation split (null without one): checkpoints/best.safetensors and
  /// train.early_stopping. Its state travels in checkpoints.
  std::unique_ptr<ModelSelection> selection;
  int64_t stopped_early_at = 0;  ///< the epoch early stopping ended training after (0: it did not)
  std::optional<EvalResult> last_eval;
  int64_t last_eval_step = -1;  ///< position.step when last_eval was taken
  double last_train_loss = std::nan("");
  TrainStatus status = TrainStatus::Finished;
  int exit_code = 0;
  std::string failure;  ///< why training failed (status Failed): thrown after the summary is written

  /// `report:` and the rows measured so far (train/stage_report.h).
  ReportConfig report;
  std::vector<StageRow> stage_rows;
  /// What the stage that runs now did, for its row of the table ("int8 static: 4 of 4 layers").
  std::string stage_note;

  /// Callbacks of the trainer, in order (stages and extensions add theirs before training).
  std::vector<std::unique_ptr<TrainCallback>> callbacks;

  /// Saves a checkpoint of the current model and optimizer at `pos` as STEM.safetensors; `latest`:
  /// it becomes the one a resume starts from (not for best.safetensors).
  void save_checkpoint(const std::filesystem::path& stem, const TrainPosition& pos, bool latest = true);
  /// After epoch `epoch`: evaluates the validation split, logs it, saves best.safetensors when it
  /// improved, and returns whether training goes on (false: train.early_stopping's patience ran out).
  bool validate_epoch(int64_t epoch, const TrainPosition& pos);
  /// Loads checkpoints/best.safetensors' weights into the model (train.early_stopping.restore_best).
  void restore_best();
  /// Throws NonFiniteError (nothing saved) when a weight is not finite.
  void refuse_nonfinite_weights(int64_t step) const;
  /// Evaluates the model on the test split (recording the result and its step).
  const EvalResult& evaluate_now();
  /// Forgets the last evaluation: the model changed since (a stage replaced or rewrote it), so the
  /// next `evaluate` measures it instead of reusing that result.
  void forget_evaluation() {
    last_eval.reset();
    last_eval_step = -1;
  }
};

/// Everything that can be refused, checked before the run folder is touched: data, model (on
/// `device`, init_from loaded), optimizer, schedule, stages, callbacks, the memory estimate.
/// `run_folder`: where the run folder will be (runs/<name>; it may not exist yet), in which a
/// dataset finds what it made before (a trained tokenizer). (pipeline.cpp; `group` null for one
/// process.)
std::unique_ptr<PipelineState> build_pipeline(const config::Config& cfg, Device device, std::ostream& out,
                                              const parallel::ParallelConfig& parallel,
                                              const parallel::ProcessGroup* group,
                                              const std::filesystem::path& run_folder = {});

/// The whole state behind a stage's context: for the built-in stages (train, evaluate, save) and
/// the pipeline's own helpers, never for an extension.
inline PipelineState& pipeline_state(StageContext& context) { return *context.s_; }

/// Evaluates s.model, saves it to runs/<name>/stages/<k>_<stage>.safetensors, times it, appends
/// the row to s.stage_rows, logs a `stage_report` record and prints one line. `note` is
/// s.stage_note (cleared afterwards). (report: {stages: true}; train/stage_report.h)
const StageRow& measure_stage(PipelineState& s, const std::string& stage);

}  // namespace ingot::train
