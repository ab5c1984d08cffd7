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

Tensor kd_loss(const Tensor& student_logits, const Tensor& teacher_logits, double temperature) {
  INGOT_CHECK_AS(student_logits.dim() >= 2 && student_logits.shape() == teacher_logits.shape(), ShapeError,
                 "distill: student logits {} and teacher logits {} must both be [batch, classes] (or a language "
                 "model's [batch, positions, vocabulary]): give the student as many classes as the teacher",
                 student_logits.shape().str(), teacher_logits.shape().str());
  INGOT_CHECK_AS(temperature > 0.0, ConfigError, "distill: temperature must be > 0, got {}", temperature);
  // A language model's [B, T, V]: every position is a row, the mean is over the B * T rows.
  const int64_t classes = student_logits.size(-1);
  const Tensor student = student_logits.reshape(Shape{-1, classes});
  const Tensor teacher = teacher_logits.reshape(Shape{-1, classes});
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
