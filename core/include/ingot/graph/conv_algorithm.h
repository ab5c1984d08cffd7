// The convolution algorithm pass: each 3x3, stride-1 f32 convolution of a graph (forward and both
// backward ops) is timed with the direct kernel and with a Winograd one, and keeps the faster.
// Winograd multiplies less and rounds differently, so a graph this pass changed no longer gives
// eager's bits (the losses agree to f32 rounding); it is off unless asked for
// (train.compile.winograd; docs/compile.md).
#pragma once

#include "ingot/graph/graph.h"

namespace ingot::graph {

enum class ConvChoice {
  Measure,  ///< time both kernels on the node's shapes, keep Winograd where it is 10% faster
  Always,   ///< Winograd wherever the backend takes it (tests)
};

/// Sets INGOT_CONV_ALGO_WINOGRAD on the convolutions it chooses; returns how many.
int choose_conv_algorithms(Graph& graph, ConvChoice choice = ConvChoice::Measure);

/// Whether `node` is a convolution allowed to run a Winograd kernel.
bool allows_winograd(const Node& node);

}  // namespace ingot::graph
