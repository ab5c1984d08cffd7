// Gradient checkpointing (torch.utils.checkpoint with use_reentrant=False): a segment of the
// forward pass keeps only its inputs; when the backward pass reaches the segment it runs the
// segment's forward again and its nodes use the recomputed tensors. Memory for compute.
#pragma once

#include <functional>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::autograd {

/// A segment of a forward pass: tensors in, tensors out. It must run the same ops each time it
/// is called with the same inputs (no branch on data); it may draw random numbers.
using CheckpointFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

/// Returns fn(inputs), recorded so that the graph keeps none of the segment's intermediate
/// tensors (its nodes keep shape-only stand-ins) but `inputs` and `fn` (and what fn refers to:
/// the module and its parameters must outlive the backward pass). When a backward pass first
/// needs one of the segment's saved tensors it runs fn once more, with grad mode on, on inputs
/// detached from the graph, under the state of the first call:
///   - every Generator the segment drew from (Dropout's, default_generator(), any other) is set
///     to the state it had at the segment's first draw from it, and afterwards put back to its
///     current state, so the draws repeat bit for bit and the outer random stream is unchanged;
///   - the autocast state (AutocastMode::get()) is the one of the first call;
///   - is_recomputing() is true (BatchNorm2d then does not update its running statistics again).
/// Gradients are therefore bit-identical to running fn without checkpointing. Each backward pass
/// that needs the segment recomputes it once (retain_graph: once per pass). Under no_grad, or
/// when nothing needs a graph, this is fn(inputs). A checkpoint inside a checkpointed segment
/// is its own segment (nesting works; the outer recomputation runs the inner forward again).
std::vector<Tensor> checkpoint(const CheckpointFunction& fn, const std::vector<Tensor>& inputs);
/// The one-tensor form.
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input);

/// True while this thread recomputes a checkpointed segment in a backward pass: layers with
/// side effects in forward skip them (BatchNorm2d's running statistics, num_batches_tracked).
bool is_recomputing();

}  // namespace ingot::autograd
