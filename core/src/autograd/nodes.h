// The node kinds of the autograd graph: a recorded op of the op table (its gradient rule), a
// view or copy (a closure), and a leaf's gradient accumulator. Private to core.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint_frame.h"
#include "ingot/autograd/grad_rules.h"
#include "ingot/autograd/node.h"
#include "record.h"

namespace ingot::autograd {

/// One recorded op: its saved inputs and outputs (aliases without autograd state for what its
/// rule's GradSaves declaration names, shape-only stand-ins for the rest), a copy of its
/// attribute struct, and the op table's gradient rule. A node of a checkpointed segment keeps
/// only stand-ins and gets the real tensors from its frame when it runs.
class OpNode final : public Node {
 public:
  OpNode(OpKind op, SavedTensors saved, const void* attrs);
  std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) override;
  void release() override;
  std::string name() const override;

  /// Makes this node number `index` of `frame` (its saved tensors come from there).
  void set_frame(std::shared_ptr<CheckpointFrame> frame, size_t index);
  const void* attrs() const { return has_attrs_ ? attrs_.data() : nullptr; }

 private:
  OpKind op_;
  SavedTensors saved_;
  std::vector<uint64_t> attrs_;  ///< the attribute struct's bytes (8-byte aligned)
  bool has_attrs_ = false;
  bool released_ = false;
  std::shared_ptr<CheckpointFrame> frame_;
  size_t frame_index_ = 0;
};

/// A view or copy of one input.
class ViewNode final : public Node {
 public:
  ViewNode(const char* name, ViewBackward backward) : Node(1), name_(name), backward_(std::move(backward)) {}
  std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) override;
  std::string name() const override { return name_; }

 private:
  const char* name_;
  ViewBackward backward_;
};

/// Sums incoming gradients into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf) : Node(1), leaf_(std::move(leaf)) {}
  std::vector<Tensor> apply(std::vector<Tensor>& grad_outputs) override;
  std::string name() const override { return "AccumulateGrad"; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

}  // namespace ingot::autograd
