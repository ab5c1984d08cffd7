// The trainer callback of a distillation stage: runs the frozen teacher on each micro-batch, adds
// alpha * T^2 * KL(teacher || student) to the loss, and logs the soft- and hard-label terms apart
// (a `distill` record in metrics.jsonl every log_every optimizer steps).
#pragma once

#include <cstdint>
#include <memory>

#include "ingot/nn/module.h"
#include "ingot/train/callback.h"
#include "ingot/train/metrics_log.h"
#include "kd_loss.h"

namespace ingot::distill {

struct DistillOptions {
  double temperature = 4.0;
  double alpha = 0.9;
  int64_t log_every = 10;  ///< optimizer steps between `distill` records
};

/// Means of the two terms over the micro-batches seen (NaN when none, or kd with alpha = 0).
struct DistillTerms {
  double kd_loss = 0.0;  ///< T^2 * KL, before the alpha weight
  double ce_loss = 0.0;  ///< the hard-label loss, before the (1 - alpha) weight
  int64_t batches = 0;
};

class DistillCallback final : public train::TrainCallback {
 public:
  /// `teacher` must already be frozen, in eval mode, on the student's device (freeze_teacher).
  /// `tap` is where the stage's scaled hard-label loss leaves its unscaled value (scaled_loss);
  /// `metrics` may be null (nothing logged).
  DistillCallback(nn::ModulePtr teacher, DistillOptions options, std::shared_ptr<LossTap> tap,
                  train::MetricsLog* metrics);

  const char* name() const override { return "distill"; }
  /// alpha * kd_loss(output, teacher(inputs), T), the teacher run under no-grad; undefined (no
  /// teacher forward at all) when alpha is 0.
  Tensor extra_loss(train::TrainState& state, const data::Batch& batch, const Tensor& output,
                    const Tensor& loss) override;
  /// Writes the `distill` record every log_every steps.
  void after_optimizer_step(train::TrainState& state) override;

  /// Both terms over everything seen since construction.
  DistillTerms totals() const { return mean(total_); }
  /// How many times the teacher ran (0 with alpha = 0).
  int64_t teacher_forwards() const { return teacher_forwards_; }

 private:
  struct Sums {
    double kd = 0.0, ce = 0.0;
    int64_t kd_batches = 0, ce_batches = 0;
  };
  static DistillTerms mean(const Sums& s);

  nn::ModulePtr teacher_;
  DistillOptions options_;
  std::shared_ptr<LossTap> tap_;
  train::MetricsLog* metrics_;
  Sums window_, total_;
  int64_t teacher_forwards_ = 0;
};

}  // namespace ingot::distill
