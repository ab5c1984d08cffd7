// The fusion pass: pairs of ops over an intermediate value that nothing else reads become one op
// of the op table's fused rows (ABI 2.5), run by the backend that ran the pair, so the value is
// never written to memory and read back (docs/compile.md: what fuses).
#pragma once

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// Replaces, where the backend that ran both ops runs the fused op on the same tensors (its
/// supports() says so):
///   BATCH_NORM -> RELU          by BATCH_NORM_RELU  (a conv block's normalisation)
///   ADD -> RELU                 by ADD_RELU         (a residual block's output)
///   ADD -> RELU_BWD (gradient)  by ADD_RELU_BWD     (the two gradients of a block's input)
///   MATMUL / CONV2D -> RELU, GELU or GELU_TANH (f32) by the same op with that activation as its
///                               epilogue (a transformer's MLP at inference; in training the
///                               activation's input is kept for its gradient, so nothing fuses)
/// The first op's output must be read by the second alone (not kept after the step, not written
/// in place). Each fused op gives what its pair gives, bit for bit, on the reference backend and
/// on cpu_onednn. Returns how many pairs fused.
int fuse_elementwise(Graph& graph);

}  // namespace ingot::graph
