// Recording ops and views into the autograd graph, and the per-tensor metadata they use.
#include "record.h"

#include <atomic>

#include "checkpoint_frame.h"
#include "ingot/autograd/saved_tensors.h"
#include "ingot/runtime/dispatch_chain.h"
#include "nodes.h"

namespace ingot::autograd {

uint64_t Node::next_sequence_nr() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

AutogradMeta& meta_of(const Tensor& t) {
  TensorImpl& impl = t.impl();
  if (impl.autograd == nullptr) impl.autograd = std::make_shared<AutogradMeta>();
  return *impl.autograd;
}

Tensor saved_alias(const Tensor& t) {
  if (!t.defined()) return t;
  auto impl = std::make_shared<TensorImpl>(t.impl());
  impl->autograd.reset();
  return Tensor(std::move(impl));
}

Edge gradient_edge(const Tensor& t) {
  if (!needs_grad(t)) return {};
  AutogradMeta& m = meta_of(t);
  if (m.grad_fn != nullptr) return {m.grad_fn, m.output_nr};
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (acc == nullptr) {
    // The accumulator holds the leaf; the leaf holds the accumulator only weakly.
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    m.grad_accumulator = acc;
  }
  return {acc, 0};
}

namespace {

/// Marks `out` as output `index` of `node`.
void set_history(const Tensor& out, const std::shared_ptr<Node>& node, int index) {
  if (!out.defined() || !is_floating(out.dtype())) return;
  AutogradMeta& m = meta_of(out);
  m.requires_grad = true;
  m.grad_fn = node;
  m.output_nr = index;
}

}  // namespace

void record_op(OpKind op, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, const void* attrs) {
  if (!GradMode::is_enabled() || !op_info(op).differentiable) return;
  bool any = false;
  for (const Tensor& t : inputs) any = any || needs_grad(t);
  if (!any) return;
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  uint64_t needs = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    edges.push_back(gradient_edge(inputs[i]));
    if (i < 64 && edges.back().valid()) needs |= uint64_t{1} << i;
  }
  const GradSaves saves = grad_saves(op, attrs, needs);
  const SavedTensorsScope* scope = saves.empty() ? nullptr : saved_tensors_scope();
  // In a checkpointed segment's forward the node keeps stand-ins only: its frame recomputes the
  // rest when the backward pass reaches it.
  const bool stand_ins_only = scope != nullptr && !scope->recomputing;
  SavedTensors saved;
  saved.inputs.reserve(inputs.size());
  saved.outputs.reserve(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    saved.inputs.push_back(saves.input(i) && !stand_ins_only ? saved_alias(inputs[i]) : shape_only(inputs[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    saved.outputs.push_back(saves.output(i) && !stand_ins_only ? saved_alias(outputs[i]) : shape_only(outputs[i]));
  if (scope != nullptr && scope->recomputing) scope->frame->capture(op, saved);
  auto node = std::make_shared<OpNode>(op, std::move(saved), attrs);
  if (stand_ins_only) node->set_frame(scope->frame->shared_from_this(), scope->frame->add_node(op));
  node->next_edges() = std::move(edges);
  for (size_t i = 0; i < outputs.size(); ++i) set_history(outputs[i], node, static_cast<int>(i));
}

namespace {

/// Records each op after the backend ran it, with the inputs it ran on (after autocast).
class Recorder final : public OpInterceptor {
 public:
  const char* name() const override { return "autograd"; }
  std::vector<Tensor> intercept(const OpCall& call, const DispatchNext& next) override {
    refuse_shape_only(call.op, *call.inputs);  // a gradient rule reading what it did not declare
    std::vector<Tensor> outputs = next(call);
    record_op(call.op, *call.inputs, outputs, call.attrs);
    return outputs;
  }
};

}  // namespace

void install_recorder() {
  static const bool installed = [] {
    dispatch_chain::add(std::make_shared<Recorder>(), InterceptorOrder::Autograd);
    return true;
  }();
  (void)installed;
}

void record_view_node(const Tensor& input, const Tensor& output, const char* name, ViewBackward backward) {
  auto node = std::make_shared<ViewNode>(name, std::move(backward));
  node->next_edges().push_back(gradient_edge(input));
  AutogradMeta& m = meta_of(output);
  m.requires_grad = true;
  m.grad_fn = node;
  m.output_nr = 0;
}

}  // namespace ingot::autograd
