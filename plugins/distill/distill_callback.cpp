// The distillation callback: the teacher's forward and the soft-target term per micro-batch, and
// the `distill` metrics records.
#include "distill_callback.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"

namespace ingot::distill {

DistillCallback::DistillCallback(nn::ModulePtr teacher, DistillOptions options, std::shared_ptr<LossTap> tap,
                                 train::MetricsLog* metrics)
    : teacher_(std::move(teacher)), options_(options), tap_(std::move(tap)), metrics_(metrics) {}

Tensor DistillCallback::extra_loss(train::TrainState&, const data::Batch& batch, const Tensor& output, const Tensor&) {
  if (tap_ && tap_->last.defined()) {
    const double ce = tap_->last.item();
    tap_->last = Tensor();
    for (Sums* s : {&window_, &total_}) s->ce += ce, ++s->ce_batches;
  }
  if (options_.alpha == 0.0) return Tensor();  // the student alone: the teacher never runs
  Tensor teacher_logits;
  {
    const NoGradGuard no_grad;
    teacher_logits = (*teacher_)(batch.inputs);
  }
  ++teacher_forwards_;
  const Tensor kd = kd_loss(output, teacher_logits, options_.temperature);
  const double value = kd.item();
  for (Sums* s : {&window_, &total_}) s->kd += value, ++s->kd_batches;
  return kd * options_.alpha;
}

void DistillCallback::after_optimizer_step(train::TrainState& state) {
  // The trainer counts this step right after the callbacks ran.
  const int64_t step = state.position.step + 1;
  if (metrics_ == nullptr || options_.log_every <= 0 || step % options_.log_every != 0) return;
  const DistillTerms w = mean(window_);
  train::Record r("distill", state.epoch + 1, step);
  r.set("kd_loss", w.kd_loss).set("ce_loss", w.ce_loss).set("temperature", options_.temperature);
  r.set("alpha", options_.alpha).set("batches", w.batches);
  metrics_->log(r);
  window_ = Sums();
}

DistillTerms DistillCallback::mean(const Sums& s) {
  const double nan = std::nan("");
  return {s.kd_batches > 0 ? s.kd / static_cast<double>(s.kd_batches) : nan,
          s.ce_batches > 0 ? s.ce / static_cast<double>(s.ce_batches) : nan, std::max(s.kd_batches, s.ce_batches)};
}

}  // namespace ingot::distill
