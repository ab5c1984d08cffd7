// Saved tensors: what the autograd graph keeps of a recorded op for its gradient rule. The
// tensors the rule's GradSaves declaration names are kept as they are; every other one as a
// shape-only stand-in, so that a recorded op holds no memory its gradient does not read.
#pragma once

#include <vector>

#include "ingot/autograd/grad_rules.h"
#include "ingot/tensor/tensor.h"

namespace ingot::autograd {

/// A tensor with `t`'s shape, strides, offset, dtype and device but no data (a zero-byte
/// storage of its own): .shape(), .dtype(), views and zeros_like work; an op that reads it throws
/// an Error naming the gradient rule and the tensor, and host access throws too. Undefined stays
/// undefined.
Tensor shape_only(const Tensor& t);
/// Whether `t` (or the tensor it is a view of) is a shape-only stand-in.
bool is_shape_only(const Tensor& t);

/// `call` as the graph keeps it: the tensors grad_saves(call.op, call.attrs, call.needs_grad)
/// names as they are, the others shape_only.
GradCall kept_for_backward(const GradCall& call);

/// Runs the rule of call.op. An op the rule runs on a shape-only tensor throws "gradient of OP:
/// the rule read the data of input I ..., which its GradSaves declaration does not keep".
std::vector<Tensor> run_grad_rule(const GradCall& call, const std::vector<Tensor>& grad_outputs);

}  // namespace ingot::autograd
