// Reverse-mode autograd engine: runs the graph's backward functions from given roots in reverse
// creation order, summing the gradients of every tensor used more than once.
#pragma once

#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::autograd {

/// Backpropagates from `roots` (each with its gradient; an undefined gradient means ones for a
/// one-element root) into the .grad of every leaf that requires grad. Without retain_graph the
/// saved tensors are freed and a second backward through the same graph is an error.
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads = {}, bool retain_graph = false);

class Node;
/// The backward node this thread is running (its ops are that node's), or null outside a
/// backward pass: what anomaly detection names an op of the backward pass by.
const Node* running_node();

}  // namespace ingot::autograd
