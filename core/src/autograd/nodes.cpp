// Backward functions of the three node kinds.
#include "nodes.h"

#include <algorithm>
#include <cstring>

#include "ingot/autograd/hooks.h"
#include "ingot/autograd/saved_tensors.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"

namespace ingot::autograd {

OpNode::OpNode(OpKind op, SavedTensors saved, const void* attrs)
    : Node(static_cast<int>(saved.outputs.size())), op_(op), saved_(std::move(saved)) {
  const size_t size = op_info(op).attr_size;
  if (attrs != nullptr && size > 0) {
    attrs_.resize((size + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(attrs_.data(), attrs, size);
    has_attrs_ = true;
  }
}

void OpNode::set_frame(std::shared_ptr<CheckpointFrame> frame, size_t index) {
  frame_ = std::move(frame);
  frame_index_ = index;
}

std::string OpNode::name() const { return std::string(op_info(op_).name) + "Backward"; }

std::vector<Tensor> OpNode::apply(std::vector<Tensor>& grad_outputs) {
  INGOT_CHECK(!released_,
              "{}: trying to backward through the graph a second time (its saved tensors were freed): pass "
              "retain_graph=true to the first backward",
              name());
  INGOT_CHECK(grad_rule(op_) != nullptr, "{}: op {} has no gradient rule", name(), op_info(op_).name);
  if (!grad_outputs[0].defined()) grad_outputs[0] = zeros_like(saved_.outputs[0]);
  GradCall call{op_, {}, {}, attrs()};
  const auto& edges = next_edges();
  call.needs_grad = 0;
  for (size_t i = 0; i < std::min<size_t>(edges.size(), 64); ++i)
    if (edges[i].valid()) call.needs_grad |= uint64_t{1} << i;
  if (frame_ != nullptr) {
    // A checkpointed segment's node: the real tensors live only while its rule runs.
    SavedTensors s = frame_->unpack(frame_index_, op_);
    const auto same = [](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (a[i].defined() != b[i].defined() ||
            (a[i].defined() && (!(a[i].shape() == b[i].shape()) || a[i].dtype() != b[i].dtype())))
          return false;
      return true;
    };
    INGOT_CHECK(
        same(s.inputs, saved_.inputs) && same(s.outputs, saved_.outputs),
        "{}: the checkpointed segment's recomputation gave tensors of other shapes or dtypes than its forward: a "
        "checkpointed segment must compute the same thing every time",
        name());
    call.inputs = std::move(s.inputs);
    call.outputs = std::move(s.outputs);
  } else {
    call.inputs = saved_.inputs;
    call.outputs = saved_.outputs;
  }
  std::vector<Tensor> grads = run_grad_rule(call, grad_outputs);
  INGOT_CHECK(grads.size() == saved_.inputs.size(), "{}: gradient rule returned {} gradients for {} inputs", name(),
              grads.size(), saved_.inputs.size());
  return grads;
}

void OpNode::release() {
  saved_ = {};
  frame_.reset();
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
  run_post_accumulate_grad_hooks(leaf);
  return {};
}

}  // namespace ingot::autograd
