// The autograd graph (the tape of a define-by-run forward pass): one Node per recorded op,
// edges to the nodes that produced its inputs, and each tensor's autograd metadata.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ingot/tensor/tensor.h"

namespace ingot::autograd {

class Node;

/// Where the gradient of one input goes: output `input_nr` of `node` (null = nowhere).
struct Edge {
  std::shared_ptr<Node> node;
  int input_nr = 0;
  bool valid() const { return node != nullptr; }
};

/// A backward function: gradients of its inputs (one per edge) from those of its outputs.
class Node {
 public:
  explicit Node(int num_outputs) : num_outputs_(num_outputs), sequence_nr_(next_sequence_nr()) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// `grad_outputs` has num_outputs() entries; unused ones are undefined tensors.
  virtual std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) = 0;
  /// Frees saved tensors after a backward pass without retain_graph.
  virtual void release() {}
  virtual std::string name() const = 0;

  int num_outputs() const { return num_outputs_; }
  /// Creation order; later nodes run first when both are ready.
  uint64_t sequence_nr() const { return sequence_nr_; }
  std::vector<Edge>& next_edges() { return next_; }
  /// Non-leaf tensors that asked for retain_grad(), by output index.
  std::vector<std::weak_ptr<TensorImpl>>& retained() { return retained_; }

 private:
  static uint64_t next_sequence_nr();
  int num_outputs_;
  uint64_t sequence_nr_;
  std::vector<Edge> next_;
  std::vector<std::weak_ptr<TensorImpl>> retained_;
};

/// Autograd state of one tensor handle's impl.
/// Called on a leaf right after a backward pass added to its .grad (torch's
/// register_post_accumulate_grad_hook): where data-parallel training starts reducing a bucket.
using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;

struct AutogradMeta {
  bool requires_grad = false;
  std::vector<std::pair<uint64_t, PostAccumulateGradHook>> post_accumulate_hooks;
  Tensor grad;                          ///< accumulated gradient (leaves and retain_grad)
  std::shared_ptr<Node> grad_fn;        ///< producer; null for a leaf
  int output_nr = 0;                    ///< which output of grad_fn this tensor is
  std::weak_ptr<Node> grad_accumulator; ///< a leaf's AccumulateGrad, made on first use
};

}  // namespace ingot::autograd
