// The fused per-row cross-entropy: shape and target checks, then the CROSS_ENTROPY op and its
// backward.
#include "ingot/ops/cross_entropy.h"

#include "ops/op_util.h"

namespace ingot {

namespace {

void check_rows(const char* op, const Tensor& logits, const Tensor& target) {
  detail::check_defined(logits, op, "logits");
  detail::check_defined(target, op, "target");
  detail::check_op_dtype(INGOT_OP_CROSS_ENTROPY, logits.dtype(), "logits");
  INGOT_CHECK_SHAPE(logits.dim() == 2 && target.dim() == 1 && target.size(0) == logits.size(0),
                    "{}: logits {} and target {} must be [N, C] and [N]", op, logits.shape().str(),
                    target.shape().str());
  INGOT_CHECK_AS(target.dtype() == DType::I64, DTypeError, "{}: target is {}, expected int64 class indices", op,
                 dtype_name(target.dtype()));
}

}  // namespace

CrossEntropyRows cross_entropy_rows(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                    double label_smoothing) {
  const char* op = "cross_entropy";
  check_rows(op, logits, target);
  INGOT_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, "{}: label_smoothing must be in [0, 1], got {}", op,
              label_smoothing);
  auto attr = make_attr<ingot_attr_cross_entropy>();
  attr.ignore_index = ignore_index;
  attr.label_smoothing = label_smoothing;
  const Shape rows{logits.size(0)};
  std::vector<Tensor> out = run_op(
      INGOT_OP_CROSS_ENTROPY, {logits, target},
      {OutputSpec{rows, logits.dtype()}, OutputSpec{rows, logits.dtype() == DType::F64 ? DType::F64 : DType::F32}},
      &attr);
  return {out[0], out[1]};
}

Tensor cross_entropy_rows_backward(const Tensor& grad_loss, const Tensor& logits, const Tensor& target,
                                   const Tensor& lse, const ingot_attr_cross_entropy& attr) {
  const char* op = "cross_entropy_backward";
  check_rows(op, logits, target);
  detail::check_defined(grad_loss, op, "grad_loss");
  INGOT_CHECK_SHAPE(grad_loss.numel() == logits.size(0) && lse.numel() == logits.size(0),
                    "{}: grad_loss {} and lse {} must hold one value per row of logits {}", op,
                    grad_loss.shape().str(), lse.shape().str(), logits.shape().str());
  return detail::run1(INGOT_OP_CROSS_ENTROPY_BWD, {grad_loss.to(logits.dtype()), logits, target, lse},
                      logits.shape(), logits.dtype(), &attr);
}

}  // namespace ingot
