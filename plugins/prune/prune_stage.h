// The `prune` pipeline stage: prunes the pipeline's model one shot or on the Zhu & Gupta schedule
// during an optional fine-tuning (ingot::train::fine_tune), makes the masks permanent (for
// ln_structured: smaller layers), prints the per-layer report and sets the stage's note.
#pragma once

#include <string>

#include "ingot/train/stage.h"
#include "prune_config.h"

namespace ingot::prune {

class PruneStage final : public train::PipelineStage {
 public:
  /// `cfg` from parse_prune_config; a schedule needs fine_tune (checked here: ConfigError).
  explicit PruneStage(PruneConfig cfg);
  std::string name() const override { return "prune"; }
  bool changes_model() const override { return true; }
  /// False when the fine-tuning was interrupted by a signal (nothing of the stage is kept then
  /// but the pruned weights of the model in memory).
  bool run(train::StageContext& context) override;
  /// Shrinks the layers whose saved weights have fewer output channels (structured pruning) to
  /// the saved shapes; the file then loads as usual.
  bool prepare_saved(nn::ModulePtr& model, const io::SafetensorsFile& weights) const override;

 private:
  PruneConfig cfg_;
};

}  // namespace ingot::prune
