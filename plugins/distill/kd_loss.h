// Knowledge distillation's loss (Hinton, Vinyals and Dean 2015): the soft-target term
// T^2 * KL(softmax(teacher / T) || softmax(student / T)) and its mix with the hard-label loss.
#pragma once

#include "ingot/nn/loss_registry.h"
#include "ingot/tensor/tensor.h"

namespace ingot::distill {

/// T^2 * KL_batchmean(softmax(teacher / T) || softmax(student / T)) for logits [N, C] (or [B, T, C]: B * T rows):
/// F.kl_div(F.log_softmax(s / T, 1), F.softmax(t / T, 1), reduction='batchmean') * T * T. The
/// teacher's side is taken as log-probabilities (log_softmax), so a class whose probability
/// underflows at a small T still contributes exactly 0. Gradients flow to `student` only when
/// `teacher` does not require them (the caller's no-grad teacher forward).
Tensor kd_loss(const Tensor& student, const Tensor& teacher, double temperature);

/// alpha * kd_loss(student, teacher, T) + (1 - alpha) * cross_entropy(student, target): the
/// whole distillation loss in one expression (the stage builds the same sum from the trainer's
/// loss and a callback's extra term).
Tensor distillation_loss(const Tensor& student, const Tensor& teacher, const Tensor& target, double temperature,
                         double alpha);

/// Where the scaled loss leaves the unscaled value of its last training call (no-grad calls,
/// evaluations, leave it alone): the callback reads it to log the hard-label term apart.
struct LossTap {
  Tensor last;  ///< detached; undefined until a training forward ran
};

/// `base` multiplied by `factor` (the (1 - alpha) of the hard-label term); `base` itself when
/// factor is 1, so alpha = 0 trains exactly as the plain loss does. When `tap` is given, every
/// call under grad mode stores the unscaled loss there.
nn::Loss scaled_loss(nn::Loss base, double factor, std::shared_ptr<LossTap> tap = nullptr);

}  // namespace ingot::distill
