// Gradient rules: for each differentiable op of the op table, the gradients of its inputs
// given the gradients of its outputs, written only with the functional op API, and next to each
// rule the declaration of which inputs and outputs it reads (what the graph keeps for it).
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

/// Which tensors of a call a gradient rule reads the data of: bit i of `inputs` / `outputs` for
/// input / output i (ops have fewer than 64 of each, except concat, which reads none). The
/// graph keeps exactly these; every other tensor of the call is kept as a shape-only stand-in
/// (shape, strides, dtype, device; no data), enough for .shape() and .dtype().
struct GradSaves {
  uint64_t inputs = 0;
  uint64_t outputs = 0;
  bool input(size_t i) const { return i < 64 && ((inputs >> i) & 1u) != 0; }
  bool output(size_t i) const { return i < 64 && ((outputs >> i) & 1u) != 0; }
  bool empty() const { return inputs == 0 && outputs == 0; }
  friend bool operator==(const GradSaves&, const GradSaves&) = default;
};

/// The declaration of `op`'s rule for a call with attribute struct `attrs` (fused activations
/// change what matmul and conv2d read) and `needs_grad` (GradCall::needs_grad: the weight of a
/// matmul is not needed when only the weight's gradient is). Empty for an op without a rule.
GradSaves grad_saves(OpKind op, const void* attrs, uint64_t needs_grad = ~uint64_t{0});

/// True when the op table names a rule for `op` and grad_rules.cpp declares what it saves (the
/// generated table has one declaration per rule; a test checks that they agree).
bool has_grad_saves(OpKind op);

}  // namespace ingot
