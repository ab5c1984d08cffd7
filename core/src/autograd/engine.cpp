// The backward pass: counts how many gradients each reachable node waits for, then runs ready
// nodes latest-created first, summing gradients that meet at a node (out of place: a rule may
// hand back the very tensor it received).
#include "ingot/autograd/engine.h"

#include <queue>
#include <unordered_map>

#include "ingot/base/grad_mode.h"
#include "ingot/ops/creation.h"
#include "ingot/ops/elementwise.h"
#include "ingot/runtime/autocast_mode.h"
#include "ingot/runtime/profiler.h"
#include "record.h"

namespace ingot::autograd {

namespace {

void accumulate(std::vector<Tensor>& buffer, int index, Tensor g) {
  Tensor& slot = buffer[static_cast<size_t>(index)];
  slot = slot.defined() ? add(slot, g) : std::move(g);
}

/// Stores the gradient of a non-leaf that asked for retain_grad().
void store_retained(Node& node, const std::vector<Tensor>& grads) {
  auto& retained = node.retained();
  for (size_t i = 0; i < retained.size() && i < grads.size(); ++i) {
    std::shared_ptr<TensorImpl> impl = retained[i].lock();
    if (impl == nullptr || !grads[i].defined()) continue;
    AutogradMeta& m = meta_of(Tensor(impl));
    m.grad = m.grad.defined() ? add(m.grad, grads[i]) : grads[i].clone();
  }
}

struct LaterFirst {
  bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

thread_local const Node* t_running = nullptr;

/// Marks `node` as this thread's running node for its scope (nested passes restore the outer).
class RunningNode {
 public:
  explicit RunningNode(const Node* node) : outer_(t_running) { t_running = node; }
  ~RunningNode() { t_running = outer_; }
  RunningNode(const RunningNode&) = delete;
  RunningNode& operator=(const RunningNode&) = delete;

 private:
  const Node* outer_;
};

}  // namespace

const Node* running_node() { return t_running; }

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph) {
  INGOT_CHECK(grads.empty() || grads.size() == roots.size(), "backward: {} gradients for {} tensors", grads.size(),
              roots.size());
  NoGradGuard no_grad;
  // Backward ops run in the dtypes their forward ops ran in (torch: autocast does not reach the
  // backward pass); a checkpointed segment turns it back on while it recomputes.
  const AutocastGuard no_autocast({.enabled = false});
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  std::vector<std::shared_ptr<Node>> starts;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    INGOT_CHECK(needs_grad(r), "backward: tensor {} does not require grad and has no grad_fn", i);
    Tensor g = i < grads.size() ? grads[i] : Tensor();
    if (!g.defined()) {
      INGOT_CHECK(r.numel() == 1,
                  "backward: a gradient can be implied only for a one-element tensor; this one has shape {}: pass "
                  "the gradient",
                  r.shape().str());
      g = ones_like(r);
    }
    INGOT_CHECK_SHAPE(g.shape() == r.shape(), "backward: gradient of shape {} for a tensor of shape {}",
                      g.shape().str(), r.shape().str());
    const Edge e = gradient_edge(r);
    auto& buf = buffers[e.node.get()];
    if (buf.empty()) buf.resize(static_cast<size_t>(e.node->num_outputs()));
    accumulate(buf, e.input_nr, g.to(r.dtype()));
    starts.push_back(e.node);
  }

  // How many incoming gradients each reachable node waits for.
  std::unordered_map<Node*, int> pending;
  std::vector<Node*> stack;
  std::unordered_map<Node*, bool> seen;
  for (const auto& n : starts)
    if (!seen[n.get()]) {
      seen[n.get()] = true;
      stack.push_back(n.get());
    }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      ++pending[e.node.get()];
      if (!seen[e.node.get()]) {
        seen[e.node.get()] = true;
        stack.push_back(e.node.get());
      }
    }
  }

  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, LaterFirst> ready;
  for (const auto& n : starts)
    if (pending[n.get()] == 0 && seen[n.get()]) {
      seen[n.get()] = false;  // queued once
      ready.push(n);
    }
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    const ProfileScope profile([&node] { return node->name(); }, "backward");
    std::vector<Tensor> in = std::move(buffers[node.get()]);
    buffers.erase(node.get());
    in.resize(static_cast<size_t>(node->num_outputs()));
    store_retained(*node, in);
    bool any = false;
    for (const Tensor& t : in) any = any || t.defined();
    std::vector<Tensor> out;
    if (any) {
      const RunningNode running(node.get());
      out = node->apply(in);
    }
    if (!retain_graph) node->release();
    auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      if (i < out.size() && out[i].defined()) {
        auto& buf = buffers[e.node.get()];
        if (buf.empty()) buf.resize(static_cast<size_t>(e.node->num_outputs()));
        accumulate(buf, e.input_nr, std::move(out[i]));
      }
      if (--pending[e.node.get()] == 0) ready.push(e.node);
    }
  }
}

}  // namespace ingot::autograd
