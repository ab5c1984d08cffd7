// The weight packing pass: a parameter a graph's matmul reads and never writes is reordered once,
// at compile time, into the layout the backend's kernel runs fastest in (oneDNN's blocked
// weights), and the graph keeps that copy as a constant. Only for graphs whose parameters do not
// change while they replay (CompileOptions::freeze_weights: prediction, inference benchmarks):
// the copy is not refreshed when a parameter is updated.
#pragma once

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// Replaces the weight input of each matmul whose weights are state the graph never writes by a
/// packed constant where the backend that ran it offers a layout for them. Returns how many.
int prepack_weights(Graph& graph);

}  // namespace ingot::graph
