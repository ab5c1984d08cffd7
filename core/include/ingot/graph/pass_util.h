// What the rewriting passes (fusion, pooled gradients) ask of a graph: how often each value is
// read, whether a node is an ordinary backend call, and whether its backend runs it as it stands.
#pragma once

#include <vector>

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// How many times each value is read: by nodes (an in-place write counts: it reads first), and
/// once more when something outside the step sees it (a result, a gradient, state, a constant, a
/// value that escapes or is written in place).
std::vector<int> read_counts(const Graph& graph);

/// Values a caller of the step sees afterwards: results, gradients, values that are not made by a
/// node (inputs, state, constants) and those that escape.
std::vector<char> kept_outside(const Graph& graph);

/// A backend call that a pass may rewrite: not a reorder, an in-place write or a random draw.
bool plain_call(const Node& node);

/// Whether the node's backend runs it on its descriptors and attributes (supports()).
bool backend_runs(const Node& node);

}  // namespace ingot::graph
