// A checkpointed segment as the autograd graph sees it (private to core/src/autograd): the nodes
// its forward recorded keep shape-only stand-ins and ask the frame for their saved tensors, which
// the frame gets by running the segment again (torch's non-reentrant checkpoint frame).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ingot/autograd/checkpoint.h"
#include "ingot/ops/random.h"
#include "ingot/runtime/autocast_mode.h"
#include "ingot/runtime/op_info.h"
#include "ingot/tensor/tensor.h"

namespace ingot::autograd {

/// What an OpNode keeps for its rule (see saved_tensors.h).
struct SavedTensors {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

class CheckpointFrame : public std::enable_shared_from_this<CheckpointFrame> {
 public:
  /// `inputs` are the segment's inputs (the frame keeps them); the autocast state is this
  /// thread's at the time of the call.
  CheckpointFrame(CheckpointFunction fn, const std::vector<Tensor>& inputs);
  CheckpointFrame(const CheckpointFrame&) = delete;
  CheckpointFrame& operator=(const CheckpointFrame&) = delete;

  /// Forward: numbers the next recorded node that saves tensors.
  size_t add_node(OpKind op);
  /// Forward: the first draw of `gen` in the segment (its state then is what recomputing sets).
  void before_draw(Generator& gen);
  /// Backward: node `index`'s saved tensors, handed over (recomputed first when not at hand).
  SavedTensors unpack(size_t index, OpKind op);
  /// Recompute: the saved tensors of the next recorded node that saves tensors.
  void capture(OpKind op, SavedTensors saved);

 private:
  void recompute();

  CheckpointFunction fn_;
  std::vector<Tensor> inputs_;  ///< aliases without autograd state
  std::vector<bool> input_requires_grad_;
  AutocastState autocast_;
  std::vector<std::pair<Generator*, Generator::State>> rng_;  ///< state at each generator's first draw
  std::vector<OpKind> ops_;                                   ///< the forward's nodes that save tensors
  std::vector<std::optional<SavedTensors>> recomputed_;
  size_t captured_ = 0;
};

/// What record_op does with the saved tensors of the nodes this thread records: the innermost
/// checkpointed segment's forward (stand-ins only, the node numbered in the frame) or its
/// recomputation (handed to the frame). Null outside checkpointed segments.
struct SavedTensorsScope {
  CheckpointFrame* frame = nullptr;
  bool recomputing = false;
};
const SavedTensorsScope* saved_tensors_scope();

}  // namespace ingot::autograd
