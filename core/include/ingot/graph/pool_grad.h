// The pooled-gradient pass: in a ReLU -> max pooling block's backward pass, ReLU's gradient is
// taken on the pooled gradient, before max pooling's gradient spreads it, instead of after: the
// same numbers on a quarter of the elements (2x2 windows).
#pragma once

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// Rewrites relu_bwd(max_pool2d_bwd(g, y, ws), y) as max_pool2d_bwd(relu_bwd(g, p), y, ws), where
/// p is the pooled output of the max_pool2d that made ws from y (or a copy of it in g's layout).
/// Exact when the windows do not overlap (stride >= kernel): each input position receives at most
/// one window's gradient, and it is that window's maximum, so the test y > 0 there is p > 0; every
/// other position gets +0 either way. The pooling gradient's output must be read by relu_bwd
/// alone, and the backend that ran both must run the rewritten calls (its supports() says so).
/// Returns how many relu gradients moved.
int move_relu_grads_before_pools(Graph& graph);

}  // namespace ingot::graph
