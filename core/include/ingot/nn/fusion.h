// Layer fusion, an execution detail of Sequential and BasicBlock: Linear or Conv2d followed by an
// activation runs as one matmul / conv with the activation fused; in eval, BatchNorm2d after a
// Conv2d is folded into the conv's weight and bias. Modules, parameters and state_dict never change.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ingot/nn/batch_norm.h"
#include "ingot/nn/conv2d.h"
#include "ingot/ops/linalg.h"

namespace ingot::nn {

/// Thread-local switch (on by default). Off, every layer runs its own forward: for debugging and
/// for checking fused against unfused results.
class FusionMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Turns fusion off for its scope; restores the previous mode on exit.
class NoFusionGuard {
 public:
  NoFusionGuard() : prev_(FusionMode::is_enabled()) { FusionMode::set_enabled(false); }
  ~NoFusionGuard() { FusionMode::set_enabled(prev_); }
  NoFusionGuard(const NoFusionGuard&) = delete;
  NoFusionGuard& operator=(const NoFusionGuard&) = delete;

 private:
  bool prev_;
};

/// Runs `layers[i]`, or the fusable run of layers that starts there, on `x` (replaced by the
/// result). Returns how many layers ran (1 to 3). The patterns, each matched on the exact layer
/// types (a subclass keeps its own forward):
///   Linear -> ReLU | ReLU6 | GELU              one matmul with bias and activation
///   Conv2d -> ReLU | ReLU6 | GELU              one conv with bias and activation
///   Conv2d -> BatchNorm2d [-> ReLU | ReLU6 | GELU]   in eval (running statistics): one conv, BN folded
/// GELU is fused only when no graph is recorded: its fused gradient recomputes the matmul / conv.
size_t forward_fused(const std::vector<std::pair<std::string, ModulePtr>>& layers, size_t i, Tensor& x);

/// True when `bn` normalises with its running statistics (eval mode, track_running_stats), so
/// that it is an affine map per channel and folds into the preceding conv.
bool batch_norm_foldable(const BatchNorm2d& bn);

/// Conv weight and bias with an eval-mode BatchNorm2d folded in:
///   scale = gamma / sqrt(running_var + eps), w' = w * scale (per output channel),
///   b' = beta + (b - running_mean) * scale.
/// Computed from the current tensors on every call (never stale). Differentiable when a graph is
/// recorded; otherwise f32 host tensors are folded in one plain loop without dispatching ops.
struct FoldedConv {
  Tensor weight;
  Tensor bias;
};
FoldedConv fold_batch_norm(const Conv2d& conv, const BatchNorm2d& bn);

/// act(bn(conv(x))): one conv with BN folded in and the activation fused when fusion is on and
/// `bn` is foldable (or absent); otherwise the layers' own forwards, then the activation.
Tensor conv_bn_act(Conv2d& conv, BatchNorm2d* bn, Activation act, const Tensor& x);

/// act(bn(conv(x))) for a residual block's children named `conv` and `bn`: through conv_bn_act
/// when both are exactly the plain layers; otherwise (after replace_child, or a subclass with
/// its own forward) each child's operator(), then the activation.
Tensor block_conv_bn_act(const Module& block, const char* conv, const char* bn, Activation act, const Tensor& x);

}  // namespace ingot::nn
