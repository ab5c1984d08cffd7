// Masks during training: the schedule's update points, gradient and weight masking, and the
// gradual_prune callback's start and end.
#include "mask_callback.h"

#include <fmt/format.h>

#include <ostream>

namespace ingot::prune {

MaskCallback::MaskCallback(std::shared_ptr<Pruner> pruner, std::optional<ZhuGupta> schedule, double final_sparsity)
    : pruner_(std::move(pruner)), schedule_(schedule), final_(final_sparsity), reached_(!schedule) {}

void MaskCallback::before_optimizer_step(train::TrainState& s) {
  if (!mine(s)) return;
  const int64_t t = s.position.step;
  if (schedule_ && schedule_->is_update(t)) {
    pruner_->prune_to(schedule_->sparsity_at(t, final_));
    if (t >= schedule_->end()) reached_ = true;
  }
  pruner_->mask_gradients();
}

void MaskCallback::after_optimizer_step(train::TrainState& s) {
  if (mine(s)) pruner_->apply_masks();
}

void MaskCallback::finish() {
  if (reached_) return;
  pruner_->prune_to(final_);
  reached_ = true;
}

GradualPrune::GradualPrune(PruneConfig cfg, std::ostream& out) : cfg_(std::move(cfg)), out_(out) {}

void GradualPrune::before_optimizer_step(train::TrainState& s) {
  if (finished_ && !masks_) return;
  if (!masks_) {
    auto pruner = std::make_shared<Pruner>(s.model, cfg_, cfg_.seed);
    layers_ = report_layers(*pruner);
    before_ = snapshot(s.model, layers_);
    const ZhuGupta& z = *cfg_.schedule;
    const int64_t t = s.position.step;
    if (t > z.begin) {  // resumed: the masks so far are the zeros in the weights
      pruner->masks_from_weights();
      pruner->prune_to(z.sparsity_at(z.last_update(t), cfg_.amount.fraction));
    }
    masks_ = std::make_unique<MaskCallback>(std::move(pruner), cfg_.schedule, cfg_.amount.fraction);
  }
  masks_->before_optimizer_step(s);
}

void GradualPrune::after_optimizer_step(train::TrainState& s) {
  if (masks_) masks_->after_optimizer_step(s);
}

void GradualPrune::on_stage_end(train::TrainState& s, const std::string& stage) {
  if (!masks_ || finished_) return;
  finished_ = true;
  const std::string who = fmt::format("gradual_prune ({})", stage);
  if (!masks_->reached_final()) {
    out_ << fmt::format("{}: the schedule ends after step {} but training stopped before it: the final {} is "
                        "applied now, without training after it\n",
                        who, cfg_.schedule->end(), cfg_.amount.str());
    masks_->finish();
  }
  const std::vector<std::pair<std::string, std::string>> skipped = masks_->pruner().skipped();
  std::vector<ShapeChange> changes;
  if (cfg_.make_permanent) {
    changes = masks_->pruner().make_permanent();
    masks_.reset();
  }
  write_report(out_, who, cfg_, before_, snapshot(s.model, layers_), skipped, changes);
}

}  // namespace ingot::prune
