// The recompute pass: a value the forward pass makes cheaply and the backward pass reads much
// later is made again just before that later read, so it is not held in memory in between (what
// torch.compile's partitioner does for pointwise ops). It lowers the planned arena; each
// recomputation costs one more run of its node.
#pragma once

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// Recomputes the outputs of BATCH_NORM_RELU nodes (training) whose reads are split by a long
/// stretch of other nodes (the rest of the forward pass and part of the backward): a copy of the
/// node goes right before the first later read, which reads its output instead. The copy
/// recomputes the batch statistics from the same input, so it gives the same bits; its running
/// statistics and saved statistics go to scratch values (the first run already updated the
/// real ones). The node's inputs must not be written in between. Returns how many were added.
int recompute_activations(Graph& graph);

}  // namespace ingot::graph
