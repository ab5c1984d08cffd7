// Backward functions of the three node kinds.
#include "nodes.h"

#include <algorithm>
#include <cstring>

#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"

namespace ingot::autograd {

OpNode::OpNode(OpKind op, std::vector<Tensor> inputs, std::vector<Tensor> outputs, const void* attrs)
    : Node(static_cast<int>(outputs.size())), op_(op), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  const size_t size = op_info(op).attr_size;
  if (attrs != nullptr && size > 0) {
    attrs_.resize((size + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(attrs_.data(), attrs, size);
    has_attrs_ = true;
  }
}

std::string OpNode::name() const { return std::string(op_info(op_).name) + "Backward"; }

std::vector<Tensor> OpNode::apply(std::vector<Tensor>& grad_outputs) {
  INGOT_CHECK(!released_,
              "{}: trying to backward through the graph a second time (its saved tensors were freed): pass "
              "retain_graph=true to the first backward",
              name());
  const GradRule rule = grad_rule(op_);
  INGOT_CHECK(rule != nullptr, "{}: op {} has no gradient rule", name(), op_info(op_).name);
  if (!grad_outputs[0].defined()) grad_outputs[0] = zeros_like(outputs_[0]);
  GradCall call{op_, inputs_, outputs_, has_attrs_ ? attrs_.data() : nullptr};
  const auto& edges = next_edges();
  call.needs_grad = 0;
  for (size_t i = 0; i < std::min<size_t>(edges.size(), 64); ++i)
    if (edges[i].valid()) call.needs_grad |= uint64_t{1} << i;
  std::vector<Tensor> grads = rule(call, grad_outputs);
  INGOT_CHECK(grads.size() == inputs_.size(), "{}: gradient rule returned {} gradients for {} inputs", name(),
              grads.size(), inputs_.size());
  return grads;
}

void OpNode::release() {
  inputs_.clear();
  outputs_.clear();
  released_ = true;
}

std::vector<Tensor> ViewNode::apply(std::vector<Tensor>& grad_outputs) { return {backward_(grad_outputs[0])}; }

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>& grad_outputs) {
  Tensor g = std::move(grad_outputs[0]);
  const Tensor leaf(leaf_);
  INGOT_CHECK_SHAPE(g.shape() == leaf.shape(), "AccumulateGrad: gradient of shape {} for a tensor of shape {}",
                    g.shape().str(), leaf.shape().str());
  if (g.dtype() != leaf.dtype()) g = g.to(leaf.dtype());
  AutogradMeta& m = meta_of(leaf);
  if (!m.grad.defined()) {
    // Keep the gradient itself only when nothing else can see it; the optimizer and clipping
    // may update .grad in place.
    const bool exclusive = g.use_count() == 1 && g.storage().use_count() == 1 && g.is_contiguous();
    m.grad = exclusive ? g : g.clone();
  } else {
    m.grad = add(m.grad, g);
  }
  for (const auto& [id, hook] : std::vector(m.post_accumulate_hooks)) hook(leaf);  // may remove itself
  return {};
}

}  // namespace ingot::autograd
