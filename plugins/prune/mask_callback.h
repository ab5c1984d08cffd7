// Trainer callbacks that keep pruning masks while a model trains: MaskCallback (one pruner's masks
// on gradients before each optimizer step and on weights after it, recomputed on the Zhu & Gupta
// schedule when there is one) and GradualPrune, the `gradual_prune` entry of train.callbacks,
// which builds its pruner on the first step and makes the masks permanent when its stage ends.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "ingot/train/callback.h"
#include "prune_report.h"
#include "pruner.h"

namespace ingot::prune {

class MaskCallback final : public train::TrainCallback {
 public:
  /// Masks of `pruner`; with `schedule`, prune_to(s_t) at its update points, s_f = `final_sparsity`.
  MaskCallback(std::shared_ptr<Pruner> pruner, std::optional<ZhuGupta> schedule, double final_sparsity);
  const char* name() const override { return "prune_masks"; }
  /// At a schedule point t (= optimizer steps done): the masks to s_t; then grad *= mask.
  void before_optimizer_step(train::TrainState& s) override;
  /// weight *= mask.
  void after_optimizer_step(train::TrainState& s) override;

  /// Without a schedule, or when its last point has been reached: true.
  bool reached_final() const { return reached_; }
  /// Brings the masks to the final sparsity when the schedule did not get there.
  void finish();
  Pruner& pruner() const { return *pruner_; }

 private:
  /// The training is of this pruner's model (a later stage may train another one).
  bool mine(const train::TrainState& s) const { return &s.model == &pruner_->root(); }

  std::shared_ptr<Pruner> pruner_;
  std::optional<ZhuGupta> schedule_;
  double final_;
  bool reached_;
};

class GradualPrune final : public train::TrainCallback {
 public:
  /// `cfg` has a schedule; the report goes to `out`.
  GradualPrune(PruneConfig cfg, std::ostream& out);
  const char* name() const override { return "gradual_prune"; }
  /// The first call builds the pruner on the trained model (a run resumed past the schedule's
  /// start takes the masks from the weights' zeros and catches up with the schedule).
  void before_optimizer_step(train::TrainState& s) override;
  void after_optimizer_step(train::TrainState& s) override;
  /// After the stage it pruned in: the final sparsity, the report, and with make_permanent the
  /// masks folded in and dropped (ln_structured: the layers rebuilt smaller).
  void on_stage_end(train::TrainState& s, const std::string& stage) override;

 private:
  PruneConfig cfg_;
  std::ostream& out_;
  std::unique_ptr<MaskCallback> masks_;
  std::vector<std::string> layers_;
  std::vector<LayerRow> before_;
  bool finished_ = false;
};

}  // namespace ingot::prune
