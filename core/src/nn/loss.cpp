// Loss functions written with the functional ops only, so that autograd records and
// differentiates every step (no hand-written backward); semantics follow torch 1.13.
#include "ingot/nn/loss.h"

#include <limits>

#include "ingot/base/error.h"
#include "ingot/base/grad_mode.h"
#include "ingot/ops/ops.h"

namespace ingot::nn {
namespace {

void check_defined(const Tensor& t, const char* fn, const char* what) {
  INGOT_CHECK(t.defined(), "{}: {} is an undefined tensor", fn, what);
}

void check_same_shape(const Tensor& input, const Tensor& target, const char* fn) {
  check_defined(input, fn, "input");
  check_defined(target, fn, "target");
  INGOT_CHECK_SHAPE(input.shape() == target.shape(), "{}: input {} and target {} must have the same shape", fn,
                    input.shape().str(), target.shape().str());
}

/// None / Mean / Sum of an element-wise loss; BatchMean is kl_div's and refused here.
Tensor reduce(const Tensor& loss, Reduction r, const char* fn) {
  switch (r) {
    case Reduction::None:
      return loss;
    case Reduction::Mean:
      return mean(loss);
    case Reduction::Sum:
      return sum(loss);
    case Reduction::BatchMean:
      break;
  }
  throw Error(fmt::format("{}: reduction 'batchmean' is only defined for kl_div; use mean, sum or none", fn));
}

/// Checks the class-index target against the [N, C, d...] input and, on the host, its values.
Tensor checked_target(const Tensor& input, const Tensor& target, int64_t ignore_index, const char* fn) {
  INGOT_CHECK_AS(is_integral(target.dtype()), DTypeError,
                 "{}: target must hold integer class indices (int64), got {} {}; class probabilities (a float "
                 "target of the input's shape {}, e.g. from data.mix) are cross_entropy's",
                 fn, dtype_name(target.dtype()), target.shape().str(), input.shape().str());
  Shape expected = input.shape();
  expected.erase(1);
  Shape classes_last = input.shape();
  classes_last.erase(input.dim() - 1);
  INGOT_CHECK_SHAPE(target.shape() == expected, "{}: target {} does not fit input {} (expected target {}){}", fn,
                    target.shape().str(), input.shape().str(), expected.str(),
                    input.dim() >= 3 && target.shape() == classes_last
                        ? "; for a sequence model's [B, T, V] logits set the loss's class_dim: -1"
                        : "");
  const Tensor t = target.to(DType::I64);
  if (t.device().is_cpu()) {
    const int64_t classes = input.size(1);
    const std::vector<int64_t> values = t.to_vector<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) {
      const int64_t v = values[i];
      INGOT_CHECK(v == ignore_index || (v >= 0 && v < classes),
                  "{}: target {} at flat index {} is not a class index in [0, {}) nor ignore_index {}", fn, v, i,
                  classes, ignore_index);
    }
  }
  return t;
}

/// sum(loss) / den; den = 0 (every target ignored) gives NaN like torch, but zero gradients
/// (torch's too), not inf * 0.
Tensor weighted_mean(const Tensor& loss, const Tensor& den) {
  const Tensor empty = eq(den, 0.0);
  return sum(loss) / where(empty, 1.0, den) + where(empty, std::numeric_limits<double>::quiet_NaN(), zeros_like(den));
}

/// The NLL / smoothed cross-entropy core on [N, C, d...] log-probabilities: the reduced loss.
Tensor nll_core(const Tensor& log_probs, const Tensor& target_in, const CrossEntropyOptions& o, const char* fn) {
  check_defined(log_probs, fn, "input");
  check_defined(target_in, fn, "target");
  INGOT_CHECK(o.label_smoothing >= 0.0 && o.label_smoothing <= 1.0, "{}: label_smoothing must be in [0, 1], got {}", fn,
              o.label_smoothing);
  // An unbatched input [C] with a 0-dim target is a batch of one.
  const bool unbatched = log_probs.dim() == 1;
  const Tensor lp = unbatched ? log_probs.unsqueeze(0) : log_probs;
  INGOT_CHECK_SHAPE(lp.dim() >= 2, "{}: input {} must be [C], [N, C] or [N, C, d1, ...]", fn, log_probs.shape().str());
  const Tensor target = checked_target(lp, unbatched ? target_in.unsqueeze(0) : target_in, o.ignore_index, fn);
  const int64_t classes = lp.size(1);

  Tensor weight;
  if (o.weight.defined()) {
    INGOT_CHECK_SHAPE(o.weight.dim() == 1 && o.weight.size(0) == classes,
                      "{}: weight {} must have one entry per class ({})", fn, o.weight.shape().str(), classes);
    weight = o.weight.to(lp.dtype());
  }

  // Ignored targets index class 0 (always valid) and are zeroed by the mask afterwards.
  const Tensor valid = ne(target, o.ignore_index);
  const Tensor safe_target = where(valid, target, 0);
  const Tensor picked = gather(lp, 1, safe_target.unsqueeze(1)).squeeze(1);
  const Tensor mask = valid.to(lp.dtype());
  const Tensor target_weight =
      weight.defined() ? index_select(weight, 0, safe_target.reshape(Shape{-1})).reshape(target.shape()) * mask : mask;
  Tensor loss = -(picked * target_weight);

  if (o.label_smoothing > 0.0) {
    // torch 1.13: sum over classes of -w_c * log p_c, masked, mixed with the uniform target.
    Tensor smooth;
    if (weight.defined()) {
      Shape wshape(std::vector<int64_t>(lp.dim(), 1));
      wshape[1] = classes;
      smooth = -sum(lp * weight.reshape(wshape), {1});
    } else {
      smooth = -sum(lp, {1});
    }
    loss = loss * (1.0 - o.label_smoothing) + smooth * mask * (o.label_smoothing / static_cast<double>(classes));
  }

  switch (o.reduction) {
    case Reduction::None:
      return unbatched ? loss.squeeze(0) : loss;
    case Reduction::Sum:
      return sum(loss);
    // Divides by the summed weights of the non-ignored targets (their count when unweighted).
    case Reduction::Mean:
      return weighted_mean(loss, sum(target_weight));
    case Reduction::BatchMean:
      break;
  }
  return reduce(loss, o.reduction, fn);
}

/// True when `target` holds class probabilities for `input` (a float tensor of its shape), as
/// torch's cross_entropy reads such a target.
bool probability_target(const Tensor& input, const Tensor& target) {
  return target.defined() && is_floating(target.dtype()) && target.shape() == input.shape();
}

/// Cross-entropy against class probabilities (Mixup / CutMix targets, torch 1.13's semantics):
/// per sample -sum_c w_c t_c log p_c, with t mixed with the uniform distribution by
/// label_smoothing; mean divides by the number of samples (weights do not enter it) and
/// ignore_index does not apply.
Tensor soft_cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& o) {
  const char* fn = "cross_entropy";
  INGOT_CHECK(o.label_smoothing >= 0.0 && o.label_smoothing <= 1.0, "{}: label_smoothing must be in [0, 1], got {}", fn,
              o.label_smoothing);
  const int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  const int64_t classes = logits.size(class_dim);
  const Tensor lp = log_softmax(logits, class_dim);
  Tensor t = target.to(lp.dtype());
  if (o.label_smoothing > 0.0) t = t * (1.0 - o.label_smoothing) + o.label_smoothing / static_cast<double>(classes);
  Tensor prod = lp * t;
  if (o.weight.defined()) {
    INGOT_CHECK_SHAPE(o.weight.dim() == 1 && o.weight.size(0) == classes,
                      "{}: weight {} must have one entry per class ({})", fn, o.weight.shape().str(), classes);
    Shape wshape(std::vector<int64_t>(lp.dim(), 1));
    wshape[class_dim] = classes;
    prod = prod * o.weight.to(lp.dtype()).reshape(wshape);
  }
  const Tensor loss = -sum(prod, {class_dim});
  switch (o.reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return sum(loss);
    case Reduction::Mean:
      return mean(loss);
    case Reduction::BatchMean:
      break;
  }
  return reduce(loss, o.reduction, fn);
}

/// Unweighted [N, C] cross-entropy on the fused op: the same values as nll_core(log_softmax(.)).
Tensor fused_rows(const Tensor& logits, const Tensor& target_in, const CrossEntropyOptions& o) {
  const char* fn = "cross_entropy";
  check_defined(target_in, fn, "target");
  INGOT_CHECK(o.label_smoothing >= 0.0 && o.label_smoothing <= 1.0, "{}: label_smoothing must be in [0, 1], got {}", fn,
              o.label_smoothing);
  const Tensor target = checked_target(logits, target_in, o.ignore_index, fn);
  const Tensor loss = cross_entropy_rows(logits, target, o.ignore_index, o.label_smoothing).loss;
  switch (o.reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return sum(loss);
    case Reduction::Mean:  // over the non-ignored rows
      return weighted_mean(loss, sum(ne(target, o.ignore_index).to(loss.dtype())));
    case Reduction::BatchMean:
      break;
  }
  return reduce(loss, o.reduction, fn);
}

}  // namespace

Reduction parse_reduction(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  if (name == "batchmean") return Reduction::BatchMean;
  throw ConfigError(fmt::format("unknown reduction '{}'; valid: none, mean, sum, batchmean", name));
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
    case Reduction::BatchMean:
      return "batchmean";
  }
  return "?";
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options) {
  INGOT_CHECK(options.label_smoothing == 0.0, "nll_loss: label_smoothing is cross_entropy's option, got {}",
              options.label_smoothing);
  return nll_core(log_probs, target, options, "nll_loss");
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options) {
  check_defined(logits, "cross_entropy", "logits");
  INGOT_CHECK_SHAPE(logits.dim() >= 1, "cross_entropy: logits {} must be [C], [N, C] or [N, C, d1, ...]",
                    logits.shape().str());
  if (options.classes_last && logits.dim() >= 2 && probability_target(logits, target)) {
    const int64_t classes = logits.size(-1);
    CrossEntropyOptions rows = options;
    rows.classes_last = false;
    const Tensor loss =
        soft_cross_entropy(logits.reshape(Shape{-1, classes}), target.reshape(Shape{-1, classes}), rows);
    Shape expected = logits.shape();
    expected.erase(logits.dim() - 1);
    return options.reduction == Reduction::None ? loss.reshape(expected) : loss;
  }
  if (probability_target(logits, target)) return soft_cross_entropy(logits, target, options);
  if (options.classes_last && logits.dim() >= 2) {
    const int64_t classes = logits.size(-1);
    Shape expected = logits.shape();
    expected.erase(logits.dim() - 1);
    INGOT_CHECK_SHAPE(target.defined() && target.shape() == expected,
                      "cross_entropy: target {} does not fit logits {} with the classes last (expected target {})",
                      target.defined() ? target.shape().str() : "undefined", logits.shape().str(), expected.str());
    CrossEntropyOptions rows = options;
    rows.classes_last = false;
    const Tensor loss = cross_entropy(logits.reshape(Shape{-1, classes}), target.reshape(Shape{-1}), rows);
    return options.reduction == Reduction::None ? loss.reshape(expected) : loss;
  }
  if (logits.dim() == 2 && !options.weight.defined()) return fused_rows(logits, target, options);
  // log_softmax subtracts the row maximum: finite for any finite logits, unlike log(softmax).
  return nll_core(log_softmax(logits, logits.dim() == 1 ? 0 : 1), target, options, "cross_entropy");
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape(input, target, "mse_loss");
  const Tensor d = input - target;
  return reduce(d * d, reduction, "mse_loss");
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape(input, target, "l1_loss");
  return reduce(abs(input - target), reduction, "l1_loss");
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        const BceWithLogitsOptions& options) {
  const char* fn = "binary_cross_entropy_with_logits";
  check_same_shape(logits, target, fn);
  const Tensor y = target.to(logits.dtype());
  // softplus(-x) = log(1 + exp(-x)) is computed as log1p(exp(.)) and turns linear past 20:
  // finite for any finite x, with gradient sigmoid(x) - 1.
  const Tensor softplus_neg = softplus(-logits);
  Tensor loss;
  if (options.pos_weight.defined()) {
    const Tensor pw = options.pos_weight.to(logits.dtype());
    const Tensor log_weight = (pw - 1.0) * y + 1.0;
    loss = (1.0 - y) * logits + log_weight * softplus_neg;
  } else {
    loss = (1.0 - y) * logits + softplus_neg;
  }
  if (options.weight.defined()) loss = loss * options.weight.to(logits.dtype());
  INGOT_CHECK_SHAPE(loss.shape() == logits.shape(), "{}: weight {} / pos_weight {} must broadcast to input {}", fn,
                    options.weight.defined() ? options.weight.shape().str() : "none",
                    options.pos_weight.defined() ? options.pos_weight.shape().str() : "none", logits.shape().str());
  return reduce(loss, options.reduction, fn);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KlDivOptions& options) {
  check_same_shape(input, target, "kl_div");
  const Tensor t = target.to(input.dtype());
  Tensor loss;
  if (options.log_target) {
    loss = exp(t) * (t - input);
  } else {
    // xlogy(t, t) - t * input; log of 1 where t == 0 keeps both value and gradients finite.
    const Tensor safe_log = log(where(eq(t, 0.0), 1.0, t));
    loss = t * (safe_log - input);
  }
  if (options.reduction == Reduction::BatchMean) {
    const int64_t batch = input.dim() == 0 ? 1 : input.size(0);
    return sum(loss) / static_cast<double>(batch);
  }
  return reduce(loss, options.reduction, "kl_div");
}

int64_t accuracy_count(const Tensor& logits, const Tensor& target, int64_t ignore_index) {
  check_defined(logits, "accuracy_count", "logits");
  check_defined(target, "accuracy_count", "target");
  INGOT_CHECK_SHAPE(logits.dim() >= 2, "accuracy_count: logits {} must be [N, C] or [N, C, d...]",
                    logits.shape().str());
  const NoGradGuard no_grad;
  if (probability_target(logits, target))  // class probabilities (Mixup / CutMix): their most likely class
    return accuracy_count(logits, argmax(target, 1), ignore_index);
  Shape expected = logits.shape();
  expected.erase(1);
  INGOT_CHECK_SHAPE(target.shape() == expected, "accuracy_count: target {} does not fit logits {}",
                    target.shape().str(), logits.shape().str());
  const Tensor t = target.to(DType::I64);
  const Tensor hit = logical_and(eq(argmax(logits, 1), t), ne(t, ignore_index));
  return static_cast<int64_t>(sum(hit).item());
}

}  // namespace ingot::nn
