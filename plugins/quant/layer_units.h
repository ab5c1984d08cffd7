// The units quantization works on: each Linear / Conv2d of a model with what folds into it — a
// following BatchNorm2d in eval (folded into the weights) and a following ReLU (fused into the
// int8 op) — found by the model's structure: runs of a Sequential's children (Conv2d [BatchNorm2d]
// [ReLU], Linear [ReLU]) and a BasicBlock's conv1/bn1, conv2/bn2 pairs (its ReLUs are functional).
// Anything else is a unit of its own layer. The same rules find the units of a model being
// quantized and of a fresh f32 model a saved int8 model is loaded into.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/nn/conv2d.h"
#include "ingot/nn/module.h"
#include "ingot/ops/quantize.h"
#include "observer.h"

namespace ingot::quant {

struct Unit {
  std::string path;        ///< the Linear / Conv2d ("3", "layer1.0.conv1")
  std::string parent;      ///< its parent module ("" = the model itself)
  size_t index = 0;        ///< its position among the parent's children
  size_t last = 0;         ///< the position of the last child folded into it (its ReLU, BN, or itself)
  bool conv = false;       ///< Conv2d (else Linear)
  bool chainable = false;  ///< the parent is a Sequential: u8 may flow to the next int8 unit
  std::string bn;          ///< the BatchNorm2d folded in ("" = none)
  std::string relu;        ///< the ReLU fused into the int8 op ("" = none)

  nn::ModulePtr f32;          ///< the f32 layer (with BN folded in, once folded)
  nn::ModulePtr relu_module;  ///< the model's ReLU (back in place while the unit is f32)

  std::shared_ptr<Observer> input_observer, output_observer;
  QParams input_q, output_q;  ///< u8, from calibration
  Tensor qweight;             ///< i8, quantized once
  QParams weight_q;

  /// "Conv2d+BN+ReLU", "Linear", ...
  std::string kind() const;
};

/// How to find units: `linear_only` (dynamic quantization: every Linear, nothing folded or fused).
/// The model must be in eval (BatchNorm2d folds only with its running statistics).
std::vector<Unit> find_units(nn::Module& model, bool linear_only);

/// Folds each unit's BatchNorm2d into a new Conv2d with a bias (w' = w g / sqrt(v + eps),
/// b' = (b - m) g / sqrt(v + eps) + beta), installed in the conv's place on the conv's device; the
/// BatchNorm2d becomes an Identity. Sets every unit's `f32` and `relu_module`.
void fold_units(nn::Module& model, std::vector<Unit>& units);

/// A Conv2d like `conv` (same shape and options) but with a bias, on `conv`'s device; its values
/// are to be overwritten (drawn from a scratch generator, not the run's).
std::shared_ptr<nn::Conv2d> conv_with_bias(const nn::Conv2d& conv);

/// "" joined with "." ("" + "conv1" = "conv1", "layer1.0" + "conv1" = "layer1.0.conv1").
std::string join_path(const std::string& parent, const std::string& name);

}  // namespace ingot::quant
