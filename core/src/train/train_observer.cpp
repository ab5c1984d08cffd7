// TrainObserver: the progress bar's epoch lines and status, and the train_step / epoch records.
#include "train_observer.h"

#include <fmt/format.h>

#include "ingot/runtime/op_counts.h"

namespace ingot::train {

TrainObserver::TrainObserver(const TrainContext& ctx, const TrainPlan& plan, int64_t log_every,
                             const amp::GradScaler* scaler)
    : ctx_(ctx), plan_(plan), log_every_(log_every), scaler_(scaler) {}

void TrainObserver::epoch_started(int64_t epoch) const {
  if (ctx_.progress) ctx_.progress->start_epoch(epoch + 1, plan_.epochs, plan_.batches_per_epoch);
}

void TrainObserver::micro_batch_done(const data::Batch& batch, double mean_loss, double lr, double data_share) const {
  if (!ctx_.progress) return;
  ctx_.progress->set_data_share(data_share);
  if (scaler_ != nullptr)
    ctx_.progress->set_status(scaler_->skipped_steps() > 0 ? fmt::format("scale {:g} ({} skipped)",
                                                                         scaler_->get_scale(), scaler_->skipped_steps())
                                                           : fmt::format("scale {:g}", scaler_->get_scale()));
  ctx_.progress->update(batch.index + 1, batch.units(), mean_loss, lr);
}

void TrainObserver::step_skipped(const std::string& what) const {
  if (ctx_.progress) ctx_.progress->message(fmt::format("{}: optimizer step skipped", what));
}

void TrainObserver::step_done(const StepReport& s) const {
  if (!ctx_.metrics || (s.step % log_every_ != 0 && s.step != plan_.total_steps)) return;
  Record r = train_step_record(s.epoch, s.step, s.loss, s.lr,
                               s.seconds > 0 ? static_cast<double>(s.images) / s.seconds : 0.0, s.seconds);
  if (!ctx_.stage.empty()) r.set("stage", ctx_.stage);
  if (s.grad_norm >= 0) r.set("grad_norm", s.grad_norm);
  if (s.skipped > 0) r.set("skipped_steps", s.skipped);
  r.set("data_wait_s", s.data_seconds).set("data_share", s.seconds > 0 ? s.data_seconds / s.seconds : 0.0);
  if (scaler_ != nullptr) r.set("loss_scale", scaler_->get_scale()).set("amp_skipped_steps", scaler_->skipped_steps());
  ctx_.metrics->log(r);
}

void TrainObserver::epoch_ended(bool complete, int64_t batch) const {
  if (ctx_.progress) ctx_.progress->finish_epoch(complete ? "" : fmt::format("  stopped at batch {}", batch));
}

void TrainObserver::epoch_done(int64_t epoch, int64_t step, double loss, double seconds, int64_t batches,
                               double data_seconds) const {
  if (!ctx_.metrics) return;
  Record r("epoch", epoch, step);
  r.set("loss", loss).set("time_s", seconds).set("batches", batches);
  r.set("data_wait_s", data_seconds).set("data_share", seconds > 0 ? data_seconds / seconds : 0.0);
  if (const int64_t skipped = ctx_.loader->dataset().skipped_samples(); skipped > 0) r.set("skipped_samples", skipped);
  if (!ctx_.stage.empty()) r.set("stage", ctx_.stage);
  r.set("device", ctx_.model->device().str()).set("ops_by_backend", RawJson{ops_by_backend_json()});
  ctx_.metrics->log(r);
}

}  // namespace ingot::train
