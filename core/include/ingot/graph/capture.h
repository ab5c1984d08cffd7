// Capture: runs a step eagerly while recording every backend call it makes into a Graph. What
// the step reads that no node made is an input (the tensors handed in), state (alive after the
// step: parameters, buffers, optimizer moments) or a constant (made by host code and gone after
// the step: copied). A step that a replay could not reproduce fails with the reason.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ingot/graph/graph.h"

namespace ingot::graph {

/// What capture() hands back: the step's own results (it ran for real) and its graph, or why it
/// cannot be replayed.
struct Captured {
  std::vector<Tensor> results;
  std::optional<Graph> graph;
  std::string failure;  ///< set when graph is empty
};

/// Runs `step` once, eagerly, recording it. `inputs` are the tensors a replay binds anew (the
/// batch, gradients that exist before the step); `params` are the tensors whose gradients the
/// step leaves behind (their `grad()` after it becomes part of the graph's result).
Captured capture(const std::function<std::vector<Tensor>()>& step, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& params);

/// Constants up to this size are copied when first read; a larger tensor made by host code
/// inside the step fails the capture.
inline constexpr size_t kMaxConstantBytes = size_t{1} << 20;

}  // namespace ingot::graph
