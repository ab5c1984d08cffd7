// Recording into the autograd graph: by the recorder in the dispatch chain after an op ran, and
// by the view methods of Tensor. Private to core.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "ingot/autograd/node.h"
#include "ingot/base/grad_mode.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot::autograd {

/// True when an op on `t` must be recorded: grad mode on and t requires grad.
inline bool needs_grad(const Tensor& t) { return t.defined() && t.requires_grad(); }

/// Installs the recorder in the dispatch chain (once per process; called when a first tensor is
/// marked to require grad: before that, no op can need recording).
void install_recorder();

/// Records a call of a differentiable op of the op table when any input requires grad and
/// grad mode is on; marks its floating outputs as produced by the new node, which keeps the
/// tensors its rule declares (grad_saves) and shape-only stand-ins of the others.
void record_op(OpKind op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, const void* attrs);

/// Throws when an input of `op` is a shape-only stand-in (saved_tensors.h), naming the gradient
/// rule that ran it: the recorder calls it for every op.
void refuse_shape_only(OpKind op, const std::vector<Tensor>& inputs);

/// Backward of a view or copy: the gradient of its input from the gradient of its output.
using ViewBackward = std::function<Tensor(const Tensor& grad)>;

void record_view_node(const Tensor& input, const Tensor& output, const char* name, ViewBackward backward);

/// Returns `output`, recorded as a view-like function of `input` when that needs grad.
template <class F>
Tensor record_view(const Tensor& input, Tensor output, const char* name, F&& backward) {
  if (GradMode::is_enabled() && needs_grad(input)) record_view_node(input, output, name, ViewBackward(std::forward<F>(backward)));
  return output;
}

/// The edge a gradient for `t` flows along: its producer, or its leaf accumulator.
Edge gradient_edge(const Tensor& t);

/// A handle to the same data without autograd state (what a node saves: no reference cycle
/// from an output back to its own producer).
Tensor saved_alias(const Tensor& t);

/// The autograd metadata of `t`, created on first use.
AutogradMeta& meta_of(const Tensor& t);

}  // namespace ingot::autograd
