// Loss functions (torch.nn.functional semantics), composed from the functional ops so autograd
// differentiates them: cross-entropy, NLL, MSE, L1, BCE-with-logits, KL divergence.
#pragma once

#include <cstdint>
#include <string>

#include "ingot/tensor/tensor.h"

namespace ingot::nn {

/// How per-element losses are combined. BatchMean (sum / batch size) is kl_div's only.
enum class Reduction { None, Mean, Sum, BatchMean };

/// "none" | "mean" | "sum" | "batchmean"; throws ConfigError naming the valid values.
Reduction parse_reduction(const std::string& name);
const char* reduction_name(Reduction r);

/// Options of nll_loss and cross_entropy (torch's defaults).
struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;
  /// Mixes the one-hot target with the uniform distribution: (1 - s) * nll + s / C * sum_c(-w_c log p_c).
  double label_smoothing = 0.0;
  /// Targets equal to this add nothing, neither to the loss nor to the mean's denominator.
  int64_t ignore_index = -100;
  /// Optional per-class weights [C]; a weighted mean divides by the summed weights of the
  /// non-ignored targets (torch), not by their count.
  Tensor weight;
  /// cross_entropy only: the classes are the last dim, logits [..., C] with target [...] (a
  /// language model's [B, T, V] logits and [B, T] tokens), instead of torch's dim 1.
  bool classes_last = false;
};

/// Negative log-likelihood of `log_probs` [N, C] or [N, C, d1, ...] (or [C]) at the int64
/// class indices `target` [N] or [N, d1, ...] (or 0-dim). label_smoothing must be 0.
/// Reduction::Mean of an all-ignored batch is NaN with zero gradients, like torch.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& options = {});

/// torch.nn.functional.cross_entropy with class-index targets: nll_loss(log_softmax(logits, 1))
/// plus label smoothing (weighted as in torch 1.13). Stable for any finite logits. Unweighted rows
/// ([N, C], or [..., C] with classes_last) run the fused CROSS_ENTROPY op, whose backward keeps one
/// log-sum-exp per row instead of the [N, C] log-probabilities. A float target of the logits'
/// shape holds class probabilities (Mixup / CutMix): -sum_c w_c t_c log p_c per sample, mean over
/// the samples, as torch's.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options = {});

/// Mean squared error (input - target)^2; shapes must match.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

/// Mean absolute error |input - target|; shapes must match. Its gradient at input == target is 0.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

/// Options of binary_cross_entropy_with_logits.
struct BceWithLogitsOptions {
  Reduction reduction = Reduction::Mean;
  /// Optional weight broadcast to the input's shape, multiplying each element's loss.
  Tensor weight;
  /// Optional weight of the positive term, broadcast along the last dim (one per class).
  Tensor pos_weight;
};

/// torch.nn.functional.binary_cross_entropy_with_logits in its stable form:
/// (1 - y) x + (1 + (pos_weight - 1) y) softplus(-x), where softplus(-x) = max(-x, 0) + log1p(exp(-|x|)).
/// Targets may be soft (in [0, 1]); shapes of input and target must match.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        const BceWithLogitsOptions& options = {});

/// Options of kl_div. The default reduction is BatchMean (the mathematically correct KL divergence
/// of a batch), not torch's element-wise "mean": Ingot fixes that known torch pitfall.
struct KlDivOptions {
  Reduction reduction = Reduction::BatchMean;
  /// The target holds log-probabilities too.
  bool log_target = false;
};

/// torch.nn.functional.kl_div: `input` holds log-probabilities, `target` probabilities (or
/// log-probabilities with log_target). Per element: target * (log(target) - input), with
/// 0 * log(0) = 0. BatchMean divides the sum by input.size(0).
Tensor kl_div(const Tensor& input, const Tensor& target, const KlDivOptions& options = {});

/// How many rows of `logits` [N, C] (or [N, C, d...]) have their argmax over dim 1 equal to
/// `target` [N] (or [N, d...]). Targets equal to ignore_index never count.
int64_t accuracy_count(const Tensor& logits, const Tensor& target, int64_t ignore_index = -100);

}  // namespace ingot::nn
