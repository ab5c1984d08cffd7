// Executable: a graph ready to replay. Every descriptor is built once; a replay patches the data
// pointers of the bound inputs and of the values the step leaves behind, advances the random
// generators as the step would have, and calls each backend directly: no module code, autograd,
// dispatch chain, backend selection or allocation of intermediate values (they live in one
// arena planned by liveness).
#pragma once

#include <memory>
#include <vector>

#include "ingot/graph/graph.h"
#include "ingot/graph/passes.h"

namespace ingot::graph {

class Executable {
 public:
  /// `graph` after its passes; values without an arena offset get their own block.
  explicit Executable(Graph graph);

  /// Runs the step on `inputs` (shaped as at capture: the caller's guards check that), sets the
  /// gradients of `params` and returns the step's results. `node_seconds`, when given, receives
  /// each node's wall time.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& params,
                          std::vector<double>* node_seconds = nullptr);

  const Graph& graph() const { return graph_; }

 private:
  struct Patch {
    size_t node;
    bool output;
    size_t slot;
    int value;
  };
  Graph graph_;
  std::shared_ptr<Storage> arena_;
  std::vector<std::vector<ingot_tensor_desc>> in_, out_;
  std::vector<Patch> patches_;
  std::vector<int> escaping_;  ///< values that get fresh memory each replay
  std::vector<std::pair<std::shared_ptr<Storage>, int>> restore_;  ///< pristine copies of written constants
};

}  // namespace ingot::graph
