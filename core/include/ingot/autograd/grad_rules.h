// Gradient rules: for each differentiable op of the op table, the gradients of its inputs
// given the gradients of its outputs, written only with the functional op API.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot {

/// One recorded op call: the tensors it received (after the functional API's casts and
/// reshapes), the outputs it produced and its ABI attribute struct (null for none).
struct GradCall {
  OpKind op;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  const void* attrs = nullptr;
  /// Bit i set: input i needs a gradient (torch's needs_input_grad). A rule may return an
  /// undefined tensor for an input whose bit is clear, and so skip its work (e.g. the input
  /// gradient of a network's first layer).
  uint64_t needs_grad = ~uint64_t{0};
  bool needs(size_t i) const { return i >= 64 || ((needs_grad >> i) & 1u) != 0; }
};

/// Returns one gradient per input, each of that input's shape (an undefined tensor for a
/// non-differentiable input: indices, conditions, running statistics). `grad_outputs` has one
/// entry per output; entries of unused outputs may be undefined (except the first).
using GradRule = std::vector<Tensor> (*)(const GradCall& call, const std::vector<Tensor>& grad_outputs);

/// The rule named in the op table's grad column; nullptr for "none".
GradRule grad_rule(OpKind op);

}  // namespace ingot
