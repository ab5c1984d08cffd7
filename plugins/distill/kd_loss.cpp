// Knowledge distillation's loss terms, composed from the functional ops so autograd differentiates
// them like any other loss.
#include "kd_loss.h"

#include <memory>
#include <utility>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/nn/loss.h"
#include "ingot/ops/ops.h"

namespace ingot::distill {

Tensor kd_loss(const Tensor& student, const Tensor& teacher, double temperature) {
  INGOT_CHECK_AS(student.dim() == 2 && student.shape() == teacher.shape(), ShapeError,
                 "distill: student logits {} and teacher logits {} must both be [batch, classes]: give the student "
                 "as many classes as the teacher",
                 student.shape().str(), teacher.shape().str());
  INGOT_CHECK_AS(temperature > 0.0, ConfigError, "distill: temperature must be > 0, got {}", temperature);
  const double inv_t = 1.0 / temperature;
  const Tensor log_p_student = log_softmax(student * inv_t, 1);
  const Tensor log_p_teacher = log_softmax(teacher.to(student.dtype()) * inv_t, 1);
  const Tensor kl =
      nn::kl_div(log_p_student, log_p_teacher, {.reduction = nn::Reduction::BatchMean, .log_target = true});
  return kl * (temperature * temperature);
}

Tensor distillation_loss(const Tensor& student, const Tensor& teacher, const Tensor& target, double temperature,
                         double alpha) {
  const Tensor ce = nn::cross_entropy(student, target);
  if (alpha == 0.0) return ce;
  const Tensor kd = kd_loss(student, teacher, temperature) * alpha;
  return alpha == 1.0 ? kd : kd + ce * (1.0 - alpha);
}

nn::Loss scaled_loss(nn::Loss base, double factor, std::shared_ptr<LossTap> tap) {
  nn::Loss out = base;
  out.fn = [fn = std::move(base.fn), factor, tap = std::move(tap)](const Tensor& output, const Tensor& target,
                                                                   nn::Reduction reduction) {
    const Tensor loss = fn(output, target, reduction);
    if (tap && GradMode::is_enabled()) tap->last = loss.detach();
    return factor == 1.0 ? loss : loss * factor;
  };
  return out;
}

}  // namespace ingot::distill
