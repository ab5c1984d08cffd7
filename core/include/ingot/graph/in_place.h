// The in-place pass: a node whose output has the bytes and layout of an input it reads last
// writes over that input, when its backend says the kernel allows it (ABI 2.6 runs_in_place):
// the memory plan then gives both one block, as an eager `relu_` or oneDNN's in-place
// primitives would. Nothing is computed differently; the planned arena shrinks.
#pragma once

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// Marks Value::shares for each output of a node that may go over one of its inputs: both
/// internal values of the arena, of equal size, never written in place, the input read by no
/// later node and only once by this one. Returns how many outputs share an input's block.
int share_in_place(Graph& graph);

}  // namespace ingot::graph
